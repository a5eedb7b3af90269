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
	"github.com/legate-mcp/legate/vault"
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
	// ID names the consent: its binding cookie, and its claim (each
	// state is accepted once).
	ID string `json:"n"`
	// Binding is the SHA-256 of the nonce in the binding cookie of the
	// browser that started the consent: only that browser completes it.
	Binding []byte `json:"b"`
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

// The additional data each kind of sealed value is bound to: a state
// cannot pass for a link's ticket, nor a ticket for a state.
const (
	stateAD  = "legate connect state v2"
	ticketAD = "legate connect ticket v1"
)

// sealer seals the states and tickets of the flow with the key Options.Key
// derives.
type sealer struct {
	key func(ctx context.Context) []byte
}

// errNotOurs: a sealed value Legate did not make, or for another use.
var errNotOurs = errors.New("the state is not one Legate made")

func (m sealer) aead(ctx context.Context) (cipher.AEAD, error) {
	if m.key == nil {
		return nil, errors.New("no key to seal connection states with")
	}
	block, err := aes.NewCipher(m.key(ctx)[:32])
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// seal encrypts and authenticates v, bound to ad.
func (m sealer) seal(ctx context.Context, ad string, v any) (string, error) {
	a, err := m.aead(ctx)
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(v)
	nonce := make([]byte, a.NonceSize())
	rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(a.Seal(nonce, nonce, b, []byte(ad))), nil
}

// unseal opens what seal made with ad into v.
func (m sealer) unseal(ctx context.Context, ad, sealed string, v any) error {
	a, err := m.aead(ctx)
	if err != nil {
		return err
	}
	b, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil || len(b) < a.NonceSize() {
		return errNotOurs
	}
	plain, err := a.Open(nil, b[:a.NonceSize()], b[a.NonceSize():], []byte(ad))
	if err != nil || json.Unmarshal(plain, v) != nil {
		return errNotOurs
	}
	return nil
}

// openState opens a state m sealed.
func openState(ctx context.Context, m *Manager, sealed string) (state, error) {
	var s state
	if err := m.sealer.unseal(ctx, stateAD, sealed, &s); err != nil {
		return s, err
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
func (m *apps) publicOrigin(instance string) string {
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
// is known, or when the instance has no OAuth app (its people supply
// their own credential: SetToken).
func (m *Manager) ConnectURL(instance, requestOrigin string) string {
	if def, ok := m.apps.def(instance); ok && def.OAuth == nil {
		return "" // people supply their own credential: no page to open
	}
	o := m.apps.publicOrigin(instance)
	if o == "" {
		o = requestOrigin
	}
	if o == "" {
		return ""
	}
	return o + "/connect/" + url.PathEscape(instance)
}

// app checks that principal of tenant may connect instance and returns
// its OAuth client with the callback the consent comes back to: the
// app's redirect_url, else Legate's public origin (or requestOrigin) +
// CallbackPath.
func (m *apps) app(ctx context.Context, instance, tenant, requestOrigin string) (*app, string, error) {
	if !m.isUpstream(instance) {
		if _, err := m.appOf(instance); err != nil {
			return nil, "", err
		}
	}
	redirect, err := m.redirectFor(instance, requestOrigin)
	if err != nil {
		return nil, "", err
	}
	a, err := m.appFor(ctx, instance, redirect)
	if err != nil {
		return nil, "", err
	}
	if a.tenant != "" && a.tenant != tenant {
		return nil, "", legate.Errorf(legate.CodeNotFound, "no connector instance %q", instance)
	}
	return a, redirect, nil
}

// authURL is the provider's consent URL that connects principal (of
// tenant) to instance, with PKCE (S256) and a sealed state naming the
// consent (id) and the hash of its browser's nonce (binding).
func (m flow) authURL(ctx context.Context, instance, tenant, principal, requestOrigin, id string, binding []byte) (string, error) {
	a, redirect, err := m.apps.app(ctx, instance, tenant, requestOrigin)
	if err != nil {
		return "", err
	}
	verifier := oauth2.GenerateVerifier()
	st := state{Instance: instance, Principal: principal, Tenant: tenant, Verifier: verifier, Redirect: redirect,
		Expires: m.opts.Now().Add(StateTTL).Unix(), ID: id, Binding: binding}
	if a.registered {
		st.Client = &client{ID: a.cfg.ClientID, Secret: a.cfg.ClientSecret}
	}
	sealed, err := m.sealer.seal(ctx, stateAD, st)
	if err != nil {
		return "", err
	}
	return a.cfg.AuthCodeURL(sealed, append(a.options(), oauth2.S256ChallengeOption(verifier))...), nil
}

// complete checks that the consent's callback r came to the browser that
// started it and was not accepted before, then exchanges the code and
// stores the connection. The state is returned whenever it opened.
func (m *Manager) complete(r *http.Request, sealed, code string) (state, error) {
	ctx := r.Context()
	s, err := openState(ctx, m, sealed)
	if err != nil {
		return s, err
	}
	if !bound(r, s) {
		return s, fmt.Errorf("this consent was started in another browser (or this browser does not keep Legate's cookies), so nothing was connected: whoever is to connect %s starts again in their own browser, from the panel's Connections page, `legate connect %s` or the link Legate gave them", s.Instance, s.Instance)
	}
	if fresh, err := m.claimed.take(ctx, m.opts.Claims, m.opts.Now(), s); err != nil {
		return s, err
	} else if !fresh {
		return s, fmt.Errorf("this consent was used already, so nothing more was connected: start again to connect %s", s.Instance)
	}
	a, err := m.apps.appFor(ctx, s.Instance, s.Redirect)
	if err != nil {
		return s, err
	}
	if s.Client != nil {
		a.cfg.ClientID, a.cfg.ClientSecret = s.Client.ID, s.Client.Secret
	}
	hctx := context.WithValue(ctx, oauth2.HTTPClient, a.client(&m.apps))
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
	rec := &record{Instance: s.Instance, Principal: s.Principal, Tenant: s.Tenant, ConnectedAt: now, Client: s.Client}
	m.apply(rec, tok)
	if err := m.save(ctx, rec); err != nil {
		return s, err
	}
	m.gen.Add(1)
	if m.opts.OnConnected != nil {
		m.opts.OnConnected(s.Instance, s.Tenant, s.Principal)
	}
	m.opts.Logger.Info("connected", "instance", s.Instance, "principal", s.Principal, "tenant", s.Tenant)
	return s, nil
}

// Handler serves the consent flow (see browser.go): GET /connect/INSTANCE
// (behind authenticate, which sets the request's principal; nil without
// authentication: the caller is Options.Principal), or with a link's
// ticket, the page that says who is being connected; POST
// /connect/INSTANCE, its form, which starts the consent in the browser;
// and GET /connect/callback.
func (m *Manager) Handler(authenticate func(http.Handler) http.Handler) http.Handler {
	mux := http.NewServeMux()
	var page http.Handler = http.HandlerFunc(flow{m}.confirm)
	if authenticate != nil {
		page = authenticate(page)
	}
	mux.HandleFunc("GET "+CallbackPath, flow{m}.callback)
	mux.HandleFunc("GET /connect/{instance}", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has(ticketParam) { // the ticket names the principal
			flow{m}.confirm(w, r)
			return
		}
		page.ServeHTTP(w, r)
	})
	mux.HandleFunc("POST /connect/{instance}", flow{m}.proceed)
	return mux
}

// RequestOrigin is the origin r came to; "" when r names no host (then
// the callback needs Legate's public URL configured).
func RequestOrigin(r *http.Request) string {
	if r.Host == "" {
		return ""
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (m flow) callback(w http.ResponseWriter, r *http.Request) {
	msg, err := m.Finish(w, r)
	if err != nil {
		page(w, http.StatusBadRequest, "Not connected", err.Error())
		return
	}
	page(w, http.StatusOK, msg, "You can close this window.")
}

// Finish completes the consent whose callback r is (GET CallbackPath,
// with the provider's code and state, or its error) and stores the
// connection, for any listener a provider sends people back to (the
// gateway's, the panel's): only in the browser that started the consent
// (its binding cookie, which Finish clears on w), and only once. It says
// who was connected to what, or why not.
func (m *Manager) Finish(w http.ResponseWriter, r *http.Request) (string, error) {
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		if s, err := openState(r.Context(), m, q.Get("state")); err == nil {
			flow{m}.unbind(w, r, s)
		}
		return "", masked(m.opts.Masks, fmt.Errorf("the provider answered %s; connect again to retry", strings.TrimSpace(e+" "+q.Get("error_description"))))
	}
	s, err := m.complete(r, q.Get("state"), q.Get("code"))
	if s.ID != "" {
		flow{m}.unbind(w, r, s)
	}
	if err != nil {
		return "", masked(m.opts.Masks, err)
	}
	return Connected(s.Instance, s.Tenant, s.Principal), nil
}

// masked is err with every secret of masks masked: a provider's answer
// is shown to a person's browser, and may echo the app's secret.
func masked(masks *vault.Masks, err error) error {
	if s := masks.Secrets(); s.Contains([]byte(err.Error())) {
		return errors.New(s.MaskString(err.Error()))
	}
	return err
}

// Connected says that instance is connected for principal of tenant.
func Connected(instance, tenant, principal string) string {
	if tenant == "" {
		return fmt.Sprintf("%s is connected for %s", instance, principal)
	}
	return fmt.Sprintf("%s is connected for %s (tenant %s)", instance, principal, tenant)
}

// page answers a person's browser.
func page(w http.ResponseWriter, status int, title, msg string) {
	browserHeaders(w)
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
