package connections

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/legate-mcp/legate/store"
)

// A consent belongs to the browser that starts it. Begin sets in that
// browser a cookie holding a random nonce, whose SHA-256 the sealed state
// carries; the callback completes the consent only when the browser it
// reaches sends that nonce back, and only once (claim). A provider's
// consent URL passed to someone else is therefore worth nothing: their
// browser has no such cookie, and the callback refuses it instead of
// connecting their account for the principal who started the consent.
//
// Where a URL is handed out of band (the CLI's, the admin API's
// connect_url), no browser has the cookie yet: the URL is Legate's own
// page (LinkURL), whose ticket names the principal, tenant and instance.
// The page says plainly who is being connected and to what, and starts
// the consent only when the person goes on: a POST from the page itself
// (its CSRF token, and no Origin but Legate's), which sets the cookie and
// sends the browser to the provider.

// LinkTTL is how long a link LinkURL makes may be opened.
const LinkTTL = 30 * time.Minute

const (
	// bindingPrefix starts the name of a consent's binding cookie; the
	// consent's id ends it, so that consents started side by side in one
	// browser do not undo each other.
	bindingPrefix = "legate_connect_"
	// formCookie holds the CSRF token of the page's form.
	formCookie = "legate_connect_form"
	// cookiePath covers the page, its form and the callback.
	cookiePath = "/connect/"
	// ticketParam names a link's ticket in its query.
	ticketParam = "ticket"
	// claimScope is the scope of the consents' claims among the operation
	// records; no connector instance id has a '/'.
	claimScope = "legate/connect-state"
)

// flow is the manager's part of the consent that runs in a person's
// browser: its pages, cookies and the provider's consent URL.
type flow struct{ *Manager }

// ticket is what a link carries, sealed: whom the page connects.
type ticket struct {
	Instance  string `json:"i"`
	Principal string `json:"p"`
	Tenant    string `json:"t"`
	Expires   int64  `json:"e"`
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// secure reports whether the cookies answered to r are to be Secure: r
// came over TLS, or to Legate's public origin, which is https (TLS ended
// before Legate).
func (m flow) secure(r *http.Request, instance string) bool {
	if r.TLS != nil {
		return true
	}
	o := m.apps.publicOrigin(instance)
	return strings.HasPrefix(o, "https://") && o == "https://"+r.Host
}

// Begin starts a consent that connects principal (of tenant) to instance
// in the browser that sent r: it sets on w the cookie that binds the
// consent to that browser and returns the provider's consent URL, which
// completes nowhere else. Its callback is on the origin r came to unless
// Legate's public URL is configured.
func (m *Manager) Begin(w http.ResponseWriter, r *http.Request, instance, tenant, principal string) (string, error) {
	id, nonce := randomString(12), randomString(32)
	sum := sha256.Sum256([]byte(nonce))
	u, err := flow{m}.authURL(r.Context(), instance, tenant, principal, RequestOrigin(r), id, sum[:])
	if err != nil {
		return "", err
	}
	http.SetCookie(w, &http.Cookie{Name: bindingPrefix + id, Value: nonce, Path: cookiePath, MaxAge: int(StateTTL.Seconds()),
		HttpOnly: true, Secure: flow{m}.secure(r, instance), SameSite: http.SameSiteLaxMode})
	return u, nil
}

// bound reports whether r, a consent's callback, came from the browser
// that started the consent s: its binding cookie holds the nonce whose
// hash s carries.
func bound(r *http.Request, s state) bool {
	if s.ID == "" || len(s.Binding) != sha256.Size {
		return false
	}
	c, err := r.Cookie(bindingPrefix + s.ID)
	if err != nil {
		return false
	}
	sum := sha256.Sum256([]byte(c.Value))
	return subtle.ConstantTimeCompare(sum[:], s.Binding) == 1
}

// unbind clears the binding cookie of consent s: it is used once.
func (m flow) unbind(w http.ResponseWriter, r *http.Request, s state) {
	if s.ID == "" {
		return
	}
	http.SetCookie(w, &http.Cookie{Name: bindingPrefix + s.ID, Value: "", Path: cookiePath, MaxAge: -1,
		HttpOnly: true, Secure: m.secure(r, s.Instance), SameSite: http.SameSiteLaxMode})
}

// claims is the record of the consents accepted, in this process, when
// the manager has no store to keep them in (Options.Claims).
type claims struct {
	mu   sync.Mutex
	used map[string]time.Time // consent id -> the state's expiry
}

// take reports whether consent s is accepted for the first time, and
// records it: in ops (Options.Claims), which every replica sharing the
// store sees, else in c, in this process until the state expires.
func (c *claims) take(ctx context.Context, ops store.OperationStore, now time.Time, s state) (bool, error) {
	if ops != nil {
		op, err := ops.Begin(ctx, claimScope, s.ID, now, StateTTL)
		if err != nil {
			return false, fmt.Errorf("recording the consent: %w", err)
		}
		return op.State == store.OpNew, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.used == nil {
		c.used = map[string]time.Time{}
	}
	for id, exp := range c.used {
		if now.After(exp) {
			delete(c.used, id)
		}
	}
	if _, ok := c.used[s.ID]; ok {
		return false, nil
	}
	c.used[s.ID] = time.Unix(s.Expires, 0).Add(time.Second)
	return true, nil
}

// LinkURL is the URL to hand a person out of band (printed by the CLI,
// answered by the admin API) to connect principal (of tenant) to
// instance: Legate's page for it, on Legate's public origin
// (requestOrigin when none is configured), with a sealed ticket that
// names whom it connects, valid for LinkTTL. Opening it starts nothing:
// the page says who is being connected and asks the person to go on.
func (m *Manager) LinkURL(ctx context.Context, instance, tenant, principal, requestOrigin string) (string, error) {
	if _, _, err := m.apps.app(ctx, instance, tenant, requestOrigin); err != nil {
		return "", err
	}
	base := m.ConnectURL(instance, requestOrigin)
	if base == "" {
		return "", fmt.Errorf("%s: Legate's public URL is not known: set auth.resource", instance)
	}
	t, err := m.sealer.seal(ctx, ticketAD, ticket{Instance: instance, Principal: principal, Tenant: tenant, Expires: m.opts.Now().Add(LinkTTL).Unix()})
	if err != nil {
		return "", err
	}
	return base + "?" + url.Values{ticketParam: {t}}.Encode(), nil
}

// openTicket opens a link's ticket for instance.
func (m flow) openTicket(ctx context.Context, sealed, instance string) (ticket, error) {
	var t ticket
	if err := m.sealer.unseal(ctx, ticketAD, sealed, &t); err != nil || t.Instance != instance {
		return t, fmt.Errorf("this link is not one Legate made for %s: ask for a new one (`legate connect %s`, or the panel's Connections page)", instance, instance)
	}
	if m.opts.Now().Unix() > t.Expires {
		return t, fmt.Errorf("this link expired (links last %s): ask for a new one (`legate connect %s`, or the panel's Connections page)", LinkTTL, instance)
	}
	return t, nil
}

// confirmPage says who is being connected to what, and asks to go on.
var confirmPage = template.Must(template.New("confirm").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Connect {{.Instance}} for {{.Principal}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body>
<h1>Connect {{.Instance}} for <span id="principal">{{.Principal}}</span>{{if .Tenant}} (tenant <span id="tenant">{{.Tenant}}</span>){{end}}</h1>
<p id="who">Going on connects <strong>your account at {{.Provider}}</strong> to Legate's <strong>{{.Instance}}</strong> for the principal <strong>{{.Principal}}</strong>{{if .Tenant}} of tenant <strong>{{.Tenant}}</strong>{{end}}:
every call {{.Principal}} makes through {{.Instance}} will then act as that account.</p>
<p><strong>Go on only if you are {{.Principal}}.</strong> If someone sent you this link, close this page: they would act as you.</p>
<form method="post" action="{{.Action}}">
<input type="hidden" name="ticket" value="{{.Ticket}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<button id="continue">Continue to {{.Provider}}</button>
</form>
</body></html>
`))

// browserHeaders are those of every page of the flow: none may be framed
// (a page in a frame could have its button clicked for someone else).
func browserHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: under no-referrer a browser posts
	// this page's own forms with Origin: null, which the forms refuse.
	h.Set("Referrer-Policy", "same-origin")
}

// confirm serves GET /connect/INSTANCE: the page that connects the
// principal a link's ticket names, or else the request's own.
func (m flow) confirm(w http.ResponseWriter, r *http.Request) {
	browserHeaders(w)
	instance := r.PathValue("instance")
	var t ticket
	if sealed := r.URL.Query().Get(ticketParam); sealed != "" {
		var err error
		if t, err = m.openTicket(r.Context(), sealed, instance); err != nil {
			m.fail(w, http.StatusBadRequest, "Cannot connect", err)
			return
		}
	} else {
		principal, tenant := m.Caller(r)
		t = ticket{Instance: instance, Principal: principal, Tenant: tenant, Expires: m.opts.Now().Add(LinkTTL).Unix()}
	}
	a, _, err := m.apps.app(r.Context(), instance, t.Tenant, RequestOrigin(r))
	if err != nil {
		m.fail(w, http.StatusBadRequest, "Cannot connect", err)
		return
	}
	sealed, err := m.sealer.seal(r.Context(), ticketAD, t)
	if err != nil {
		m.fail(w, http.StatusInternalServerError, "Cannot connect", err)
		return
	}
	csrf := ""
	if c, err := r.Cookie(formCookie); err == nil && len(c.Value) >= 32 {
		csrf = c.Value
	} else {
		csrf = randomString(32)
		http.SetCookie(w, &http.Cookie{Name: formCookie, Value: csrf, Path: cookiePath, MaxAge: int(LinkTTL.Seconds()),
			HttpOnly: true, Secure: m.secure(r, instance), SameSite: http.SameSiteStrictMode})
	}
	provider := a.id
	if def, ok := m.apps.def(instance); ok {
		provider = def.Type
	}
	if h := hostOf(a.cfg.Endpoint.AuthURL); h != "" {
		provider += " (" + h + ")"
	}
	w.WriteHeader(http.StatusOK)
	confirmPage.Execute(w, map[string]string{"Instance": instance, "Principal": t.Principal, "Tenant": t.Tenant, "Provider": provider,
		"Action": "/connect/" + url.PathEscape(instance), "Ticket": sealed, "CSRF": csrf})
}

// fail answers a person's browser with err, masked: a provider's or an
// upstream's answer may echo a secret.
func (m flow) fail(w http.ResponseWriter, status int, title string, err error) {
	page(w, status, title, masked(m.opts.Masks, err).Error())
}

func hostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Host
}

// proceed serves POST /connect/INSTANCE, the page's form: posted from
// the page itself (no Origin but Legate's, never "null"; its CSRF token),
// it starts the consent in this browser and sends it to the provider.
func (m flow) proceed(w http.ResponseWriter, r *http.Request) {
	browserHeaders(w)
	instance := r.PathValue("instance")
	for _, o := range r.Header.Values("Origin") { // each of them: a good first one cannot carry a bad second
		if o == "null" || o != "" && !m.sameOrigin(o, r, instance) {
			page(w, http.StatusForbidden, "Not connected", fmt.Sprintf("this form was posted from another site (Origin %q), so nothing was started: open the link you were given again", o))
			return
		}
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	c, err := r.Cookie(formCookie)
	form := r.PostFormValue("csrf")
	if err != nil || form == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(form)) != 1 {
		page(w, http.StatusForbidden, "Not connected", "the form expired or this browser does not keep Legate's cookies, so nothing was started: open the link you were given again")
		return
	}
	t, err := m.openTicket(r.Context(), r.PostFormValue(ticketParam), instance)
	if err != nil {
		m.fail(w, http.StatusBadRequest, "Not connected", err)
		return
	}
	u, err := m.Begin(w, r, t.Instance, t.Tenant, t.Principal)
	if err != nil {
		m.fail(w, http.StatusBadRequest, "Cannot connect", err)
		return
	}
	http.Redirect(w, r, u, http.StatusSeeOther)
}

// OwnForm reports whether r is the form of Legate's connect page posted
// from that page: a POST under /connect/ whose Origin is the one r came
// to. The gateway's Origin guard lets it through (the page is a
// browser's, on whatever public name Legate has, which allowed_origins
// need not list); the form itself checks the rest.
func (m *Manager) OwnForm(r *http.Request, origin string) bool {
	return r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/connect/") &&
		(origin == "http://"+r.Host || origin == "https://"+r.Host)
}

// sameOrigin reports whether origin is Legate's own: the one r came to,
// or its public one.
func (m flow) sameOrigin(origin string, r *http.Request, instance string) bool {
	return origin == "http://"+r.Host || origin == "https://"+r.Host || origin == m.apps.publicOrigin(instance)
}
