package connections

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/telemetry/spans"
)

// Credentials are the credentials a call to def by caller resolves:
// shared ones are base's; with per_user (or per_user_or_shared) the
// instance's per-user credential is the caller's own connection. The
// model never sees them; no other principal's connection is ever read.
func (m *Manager) Credentials(def sources.InstanceDef, base sources.Credentials, caller connectors.Caller) connectors.Credentials {
	name := def.PerUserCredential()
	if name == "" {
		return base
	}
	return &userCredentials{m: m, def: def, base: base, caller: caller, name: name}
}

// userCredentials resolve one call's credentials.
type userCredentials struct {
	m      *Manager
	def    sources.InstanceDef
	base   sources.Credentials
	caller connectors.Caller
	name   string

	mu   sync.Mutex
	last string // the per-user token this call was given last
}

func (c *userCredentials) Has(name string) bool { return name == c.name || c.base.Has(name) }

func (c *userCredentials) Get(ctx context.Context, name string) (string, error) {
	if name != c.name {
		return c.base.Get(ctx, name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Read again within one call, the credential was refused: the token
	// is refreshed once, unless another call refreshed it already.
	refreshIs := c.def.OAuth != nil && config.Providers[c.def.Type].RefreshToken && c.def.OAuth.Credential == config.Providers[c.def.Type].Credential
	tok, err := c.m.token(ctx, c.def.ID, refreshIs, c.caller.Tenant, c.caller.Principal, c.last)
	if errors.Is(err, errNotConnected) && c.def.Mode == config.CredentialsPerUserOrShared && c.base.Has(name) {
		return c.base.Get(ctx, name)
	}
	if err == nil {
		c.last = tok
		spans.Set(ctx, "credential."+name, "connection:"+c.caller.Principal) // the caller's own, never its value
	}
	return tok, err
}

var errNotConnected = errors.New("not connected")

// NotConnected is the error of a call by principal to an instance it has
// not connected (or whose connection expired): NOT_CONNECTED, naming how
// to connect, with the connect URL in its details when Legate's public
// URL is known.
func (m *Manager) NotConnected(instance, principal, why string) *legate.Error {
	how := "legate connect " + instance
	if def, ok := m.apps.def(instance); ok && def.OAuth == nil && def.UserCredential != "" {
		how += " --token` (their own " + def.UserCredential + ")"
	} else {
		how += "`"
	}
	msg := fmt.Sprintf("%s acts as each caller and %s %s: connect it with `%s", instance, principal, why, how)
	e := &legate.Error{Code: legate.CodeNotConnected, Err: errNotConnected, Details: map[string]any{"instance": instance}}
	if u := m.ConnectURL(instance, ""); u != "" {
		msg += " or by opening " + u
		e.Details["connect_url"] = u
	}
	e.Message = msg + ", then call again"
	return e
}

// token returns the per-user credential of principal for instance id:
// the access token (refreshed first when it expires within
// RefreshMargin, or when it is refused, that is equal to the token the
// call was given already), or the refresh token (refreshIs) for a
// connector that exchanges it itself.
func (m *Manager) token(ctx context.Context, id string, refreshIs bool, tenant, principal, refused string) (string, error) {
	lock, _ := m.locks.LoadOrStore(tenant+"\x00"+SecretName(id, principal), &sync.Mutex{})
	lock.(*sync.Mutex).Lock()
	defer lock.(*sync.Mutex).Unlock()
	r, err := m.load(ctx, tenant, principal, id)
	switch {
	case err != nil:
		return "", &legate.Error{Code: legate.CodeTransient, Message: fmt.Sprintf("%s: the connection of %s cannot be read", id, principal), Err: err}
	case r == nil:
		return "", m.NotConnected(id, principal, "has not connected it")
	case r.status(m.opts.Now()) == StatusExpired:
		return "", m.NotConnected(id, principal, "has a connection that expired")
	}
	if refreshIs {
		return r.RefreshToken, nil
	}
	due := !r.Expiry.IsZero() && !m.opts.Now().Add(RefreshMargin).Before(r.Expiry)
	if (due || refused != "" && refused == r.AccessToken) && r.RefreshToken != "" {
		return m.refresh(ctx, id, r)
	}
	return r.AccessToken, nil
}

// refresh gets new tokens with r's refresh token and writes them back; a
// refresh the provider refuses marks the connection expired.
func (m *Manager) refresh(ctx context.Context, id string, r *record) (string, error) {
	a, err := m.apps.appFor(ctx, id, "")
	if err != nil {
		return "", err
	}
	if r.Client != nil {
		a.cfg.ClientID, a.cfg.ClientSecret = r.Client.ID, r.Client.Secret
	}
	hctx := context.WithValue(ctx, oauth2.HTTPClient, withParams(a.client(&m.apps), a.params))
	tok, err := a.cfg.TokenSource(hctx, &oauth2.Token{RefreshToken: r.RefreshToken}).Token()
	if err != nil {
		// Refused: an OAuth error, or (Slack) a 200 without a token.
		var re *oauth2.RetrieveError
		if !errors.As(err, &re) && !strings.Contains(err.Error(), "missing access_token") {
			return "", &legate.Error{Code: legate.CodeTransient, Message: fmt.Sprintf("%s: refreshing the connection of %s failed; try again", id, r.Principal),
				Err: errors.New(legate.NewSecrets(r.RefreshToken, r.AccessToken).MaskString(err.Error()))}
		}
		r.Status = StatusExpired
		if serr := m.save(ctx, r); serr != nil {
			m.opts.Logger.Warn("marking a connection expired", "instance", id, "principal", r.Principal, "error", serr)
		}
		m.gen.Add(1)
		m.opts.Logger.Info("a connection expired: the provider refused its refresh", "instance", id, "principal", r.Principal, "tenant", r.Tenant, "error", legate.NewSecrets(r.RefreshToken, r.AccessToken).MaskString(err.Error()))
		return "", m.NotConnected(id, r.Principal, "has a connection that expired (the provider refused to refresh it)")
	}
	m.apply(r, tok)
	r.RefreshedAt = m.opts.Now().UTC()
	if err := m.save(ctx, r); err != nil {
		return "", &legate.Error{Code: legate.CodeTransient, Message: fmt.Sprintf("%s: the refreshed connection of %s could not be saved", id, r.Principal), Err: err}
	}
	return r.AccessToken, nil
}

// apply copies tok's tokens and expiry into r: a refresh that returns no
// new refresh token keeps the one r had.
func (m *Manager) apply(r *record, tok *oauth2.Token) {
	r.AccessToken, r.TokenType, r.Expiry = tok.AccessToken, tok.TokenType, tok.Expiry
	if tok.ExpiresIn > 0 { // on the manager's clock
		r.Expiry = m.opts.Now().Add(time.Duration(tok.ExpiresIn) * time.Second).UTC()
	}
	if tok.RefreshToken != "" {
		r.RefreshToken = tok.RefreshToken
	}
	r.Status = StatusConnected
	m.opts.Masks.Add(r.secrets()...)
}

// oauthConfig is def's OAuth app as x/oauth2 takes it.
func (m *apps) oauthConfig(ctx context.Context, def sources.InstanceDef, redirect string) (*oauth2.Config, error) {
	secret, err := m.clientSecret(ctx, def)
	if err != nil {
		return nil, &legate.Error{Code: legate.CodeConfigError, Message: fmt.Sprintf("%s: the OAuth app's client_secret (%s) cannot be read; set it, or change %s.oauth.client_secret", def.ID, def.OAuth.ClientSecret, def.Path), Err: err}
	}
	return &oauth2.Config{
		ClientID: def.OAuth.ClientID, ClientSecret: secret, Scopes: def.OAuth.Scopes, RedirectURL: redirect,
		Endpoint: oauth2.Endpoint{AuthURL: def.OAuth.AuthorizeURL, TokenURL: def.OAuth.TokenURL},
	}, nil
}

// withParams is c, whose form posts also carry params when they do not
// already: the resource indicator (RFC 8707) of a refresh, which the code
// exchange names too but x/oauth2's TokenSource takes no option to add.
func withParams(c *http.Client, params map[string]string) *http.Client {
	if len(params) == 0 {
		return c
	}
	out := *c
	out.Transport = formParams{base: cmp.Or[http.RoundTripper](c.Transport, http.DefaultTransport), params: params}
	return &out
}

// formParams adds params to the form body of each POST.
type formParams struct {
	base   http.RoundTripper
	params map[string]string
}

func (f formParams) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost || r.Body == nil || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		return f.base.RoundTrip(r)
	}
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	form, err := url.ParseQuery(string(b))
	if err != nil {
		return nil, err
	}
	for k, v := range f.params {
		if !form.Has(k) {
			form.Set(k, v)
		}
	}
	body := form.Encode()
	out := r.Clone(r.Context())
	out.Body, out.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	return f.base.RoundTrip(out)
}

// liftToken is c, whose token responses that hold a token in their
// object field (Slack's authed_user: the person's token, beside the
// bot's at the top) answer with that token at the top instead, its
// refresh token and lifetime too, so that the connection keeps the
// person's token.
func liftToken(c *http.Client, field string) *http.Client {
	out := *c
	out.Transport = lifter{base: cmp.Or[http.RoundTripper](c.Transport, http.DefaultTransport), field: field}
	return &out
}

// lifter rewrites the token responses of its base (see liftToken).
type lifter struct {
	base  http.RoundTripper
	field string
}

// maxTokenResponse bounds the token response read to rewrite it.
const maxTokenResponse = 1 << 20

func (l lifter) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := l.base.RoundTrip(r)
	if err != nil || !strings.Contains(res.Header.Get("Content-Type"), "json") {
		return res, err
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxTokenResponse))
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return res, nil
	}
	var inner map[string]json.RawMessage
	if json.Unmarshal(top[l.field], &inner) != nil || len(inner["access_token"]) == 0 {
		return res, nil
	}
	for _, k := range []string{"access_token", "refresh_token", "expires_in", "token_type", "scope"} {
		delete(top, k)
		if v, ok := inner[k]; ok {
			top[k] = v
		}
	}
	delete(top, l.field)
	body, _ = json.Marshal(top)
	res.Body = io.NopCloser(bytes.NewReader(body))
	res.ContentLength = int64(len(body))
	res.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return res, nil
}
