package connections

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/netguard"
)

// StateTTL is how long a consent may take, from the connect URL to the
// callback.
const StateTTL = 10 * time.Minute

// CallbackPath is where providers send people back to.
const CallbackPath = "/connect/callback"

// state is what the flow carries through the provider, sealed.
type state struct {
	Instance  string `json:"i"`
	Principal string `json:"p"`
	Tenant    string `json:"t"`
	Verifier  string `json:"v"`
	Redirect  string `json:"r"`
	Expires   int64  `json:"e"`
	// Client is the client an upstream's app registered (RFC 7591) for
	// this consent: the callback, maybe in another process, exchanges the
	// code as that client.
	Client *client `json:"c,omitempty"`
}

// client is a registered client: kept with the connection, whose
// refreshes it makes.
type client struct {
	ID     string `json:"id"`
	Secret string `json:"s,omitempty"`
}

const stateAD = "legate connect state v1"

func (m *Manager) aead(ctx context.Context) (cipher.AEAD, error) {
	if m.opts.Key == nil {
		return nil, errors.New("no key to seal connection states with")
	}
	block, err := aes.NewCipher(m.opts.Key(ctx)[:32])
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func (m *Manager) seal(ctx context.Context, s state) (string, error) {
	a, err := m.aead(ctx)
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(s)
	nonce := make([]byte, a.NonceSize())
	rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(a.Seal(nonce, nonce, b, []byte(stateAD))), nil
}

func (m *Manager) open(ctx context.Context, sealed string) (state, error) {
	var s state
	a, err := m.aead(ctx)
	if err != nil {
		return s, err
	}
	b, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil || len(b) < a.NonceSize() {
		return s, errors.New("the state is not one Legate made")
	}
	plain, err := a.Open(nil, b[:a.NonceSize()], b[a.NonceSize():], []byte(stateAD))
	if err != nil || json.Unmarshal(plain, &s) != nil {
		return s, errors.New("the state is not one Legate made")
	}
	if m.opts.Now().Unix() > s.Expires {
		return s, fmt.Errorf("the consent took longer than %s; connect again", StateTTL)
	}
	return s, nil
}

// origin is the scheme and host of a URL, "" when it has none.
func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Scheme == "" || p.Host == "" {
		return ""
	}
	return p.Scheme + "://" + p.Host
}

// publicOrigin is Legate's public URL as configured: auth.resource's
// origin, else the origin of the instance's redirect_url.
func (m *Manager) publicOrigin(instance string) string {
	if o := origin(m.opts.Resource); o != "" {
		return o
	}
	if def, ok := m.def(instance); ok && def.OAuth != nil {
		return origin(def.OAuth.RedirectURL)
	}
	return ""
}

// ConnectURL is the URL a person opens to connect instance, on Legate's
// public origin (requestOrigin when none is configured); "" when neither
// is known.
func (m *Manager) ConnectURL(instance, requestOrigin string) string {
	o := m.publicOrigin(instance)
	if o == "" {
		o = requestOrigin
	}
	if o == "" {
		return ""
	}
	return o + "/connect/" + url.PathEscape(instance)
}

// AuthURL starts a connection of principal (of tenant) to instance: the
// provider's consent URL, with PKCE (S256) and a sealed state. The
// callback is the app's redirect_url, else Legate's public origin (or
// requestOrigin) + CallbackPath.
func (m *Manager) AuthURL(ctx context.Context, instance, tenant, principal, requestOrigin string) (string, error) {
	if !m.isUpstream(instance) {
		if _, err := m.appOf(instance); err != nil {
			return "", err
		}
	}
	redirect, err := m.redirectFor(instance, requestOrigin)
	if err != nil {
		return "", err
	}
	a, err := m.appFor(ctx, instance, redirect)
	if err != nil {
		return "", err
	}
	if a.tenant != "" && a.tenant != tenant {
		return "", legate.Errorf(legate.CodeNotFound, "no connector instance %q", instance)
	}
	verifier := oauth2.GenerateVerifier()
	st := state{Instance: instance, Principal: principal, Tenant: tenant, Verifier: verifier, Redirect: redirect, Expires: m.opts.Now().Add(StateTTL).Unix()}
	if a.registered {
		st.Client = &client{ID: a.cfg.ClientID, Secret: a.cfg.ClientSecret}
	}
	sealed, err := m.seal(ctx, st)
	if err != nil {
		return "", err
	}
	return a.cfg.AuthCodeURL(sealed, append(a.options(), oauth2.S256ChallengeOption(verifier))...), nil
}

// complete exchanges the code of a consent and stores the connection.
func (m *Manager) complete(ctx context.Context, sealed, code string) (state, error) {
	s, err := m.open(ctx, sealed)
	if err != nil {
		return s, err
	}
	a, err := m.appFor(ctx, s.Instance, s.Redirect)
	if err != nil {
		return s, err
	}
	if s.Client != nil {
		a.cfg.ClientID, a.cfg.ClientSecret = s.Client.ID, s.Client.Secret
	}
	hctx := context.WithValue(ctx, oauth2.HTTPClient, a.client(m))
	tok, err := a.cfg.Exchange(hctx, code, append(a.options(), oauth2.VerifierOption(s.Verifier))...)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return s, fmt.Errorf("%s refused the code: %s %s", a.id, re.ErrorCode, re.ErrorDescription)
		}
		if be := (*netguard.BlockedError)(nil); errors.As(err, &be) { // names an address, never a URL or credential
			return s, fmt.Errorf("%s's token endpoint %s: %w", a.id, a.cfg.Endpoint.TokenURL, be)
		}
		return s, fmt.Errorf("%s's token endpoint could not be reached; connect again", a.id)
	}
	now := m.opts.Now().UTC()
	r := &record{Instance: s.Instance, Principal: s.Principal, Tenant: s.Tenant, ConnectedAt: now, Client: s.Client}
	m.apply(r, tok)
	if err := m.save(ctx, r); err != nil {
		return s, err
	}
	m.gen.Add(1)
	if m.opts.OnConnected != nil {
		m.opts.OnConnected(s.Instance, s.Tenant, s.Principal)
	}
	m.opts.Logger.Info("connected", "instance", s.Instance, "principal", s.Principal, "tenant", s.Tenant)
	return s, nil
}

// Handler serves GET /connect/INSTANCE (behind authenticate, which sets
// the request's principal; nil without authentication: the caller is
// Options.Principal) and GET /connect/callback.
func (m *Manager) Handler(authenticate func(http.Handler) http.Handler) http.Handler {
	mux := http.NewServeMux()
	var start http.Handler = http.HandlerFunc(m.start)
	if authenticate != nil {
		start = authenticate(start)
	}
	mux.HandleFunc("GET "+CallbackPath, m.callback)
	mux.Handle("GET /connect/{instance}", start)
	return mux
}

// requestOrigin is the origin r came to; "" when r names no host (then
// the callback needs Legate's public URL configured).
func requestOrigin(r *http.Request) string {
	if r.Host == "" {
		return ""
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (m *Manager) start(w http.ResponseWriter, r *http.Request) {
	principal, tenant := m.caller(r)
	u, err := m.AuthURL(r.Context(), r.PathValue("instance"), tenant, principal, requestOrigin(r))
	if err != nil {
		page(w, http.StatusBadRequest, "Cannot connect", err.Error())
		return
	}
	http.Redirect(w, r, u, http.StatusFound)
}

func (m *Manager) callback(w http.ResponseWriter, r *http.Request) {
	msg, err := m.Finish(r)
	if err != nil {
		page(w, http.StatusBadRequest, "Not connected", err.Error())
		return
	}
	page(w, http.StatusOK, "Connected", msg+". You can close this window.")
}

// Finish completes the consent whose callback r is (GET CallbackPath,
// with the provider's code and state, or its error) and stores the
// connection, for any listener a provider sends people back to (the
// gateway's, the panel's). It says what was connected, or why not.
func (m *Manager) Finish(r *http.Request) (string, error) {
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		return "", fmt.Errorf("the provider answered %s; connect again to retry", strings.TrimSpace(e+" "+q.Get("error_description")))
	}
	s, err := m.complete(r.Context(), q.Get("state"), q.Get("code"))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s is connected for %s", s.Instance, s.Principal), nil
}

// page answers a person's browser.
func page(w http.ResponseWriter, status int, title, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><title>%s</title><h1>%s</h1><p>%s</p>\n", html.EscapeString(title), html.EscapeString(title), html.EscapeString(strings.TrimSpace(msg)))
}

// Wait polls until principal's connection to instance is made after
// since, or ctx ends.
func (m *Manager) Wait(ctx context.Context, tenant, principal, instance string, since time.Time, every time.Duration) (Info, error) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if info, ok, err := m.Get(ctx, tenant, principal, instance); err == nil && ok && info.Status == StatusConnected && !info.ConnectedAt.Before(since.Truncate(time.Second)) {
			return info, nil
		}
		select {
		case <-ctx.Done():
			return Info{}, ctx.Err()
		case <-t.C:
		}
	}
}
