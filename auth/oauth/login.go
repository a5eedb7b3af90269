package oauth

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/legate-mcp/legate/store"
)

//go:embed templates/*.html
var templateFS embed.FS

var pages = template.Must(template.ParseFS(templateFS, "templates/*.html"))

// csrfCookie holds the browser's form token: each form carries it too,
// and a post whose two differ is refused (double submit). The cookie is
// SameSite=Strict and host-only, so another site can neither send nor set it.
const csrfCookie = "legate_oauth_csrf"

// badLogin is the one message of a failed login, whether the account
// exists, is disabled, or the password is wrong.
const badLogin = "Wrong user name or password."

type page struct {
	Title, Error, Client, Redirect, ID, CSRF, Action string
	User, Tenant, Role, Profile, AccessTTL           string
	UpstreamName, UpstreamURL                        string
}

// render writes a page with headers that forbid framing, scripts and
// caching.
func render(w http.ResponseWriter, status int, name string, p page) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	pages.ExecuteTemplate(w, name, p)
}

func errorPage(w http.ResponseWriter, status int, msg string) {
	render(w, status, "error", page{Title: "Cannot continue", Error: msg})
}

// csrfToken returns the browser's form token, setting a new one when it
// has none.
func (s *Server) csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) >= 32 {
		return c.Value
	}
	v := randomID()
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: v, Path: "/oauth/", HttpOnly: true,
		Secure: r.TLS != nil || !strings.HasPrefix(s.issuer, "http://"), SameSite: http.SameSiteLaxMode})
	return v
}

// checkForm checks a posted form's origin and CSRF token and returns the
// token; "" when refused (the error is written).
func (s *Server) checkForm(w http.ResponseWriter, r *http.Request) string {
	for _, o := range r.Header.Values("Origin") { // each of them: a good first one cannot carry a bad second
		if o != "" && o != s.issuer {
			errorPage(w, http.StatusForbidden, "This form was posted from another site.")
			return ""
		}
	}
	c, err := r.Cookie(csrfCookie)
	form := r.PostFormValue("csrf")
	if err != nil || form == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(form)) != 1 {
		errorPage(w, http.StatusForbidden, "The form expired or cookies are blocked: start again from your application.")
		return ""
	}
	return c.Value
}

// pendingRequest loads the authorization request a page is about, with
// its client; on failure the error page is written.
func (s *Server) pendingRequest(w http.ResponseWriter, ctx context.Context, id string) (*authRequest, store.OAuthClient, bool) {
	st := &storage{srv: s}
	a, err := st.request(ctx, id)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.Error("reading an authorization request", "err", err)
		}
		errorPage(w, http.StatusBadRequest, "This login request is unknown or has expired.")
		return nil, store.OAuthClient{}, false
	}
	c, err := s.store.Client(ctx, a.ClientID)
	if err != nil {
		errorPage(w, http.StatusBadRequest, "The application asking is no longer registered.")
		return nil, store.OAuthClient{}, false
	}
	return a, c, true
}

func clientName(c store.OAuthClient) string {
	if c.Name != "" {
		return c.Name
	}
	return "An unnamed application (" + c.ID[:12] + "…)"
}

// loginForm is the login page of request a by client c.
func (s *Server) loginForm(c store.OAuthClient, a *authRequest, token, msg string) page {
	p := page{Title: "Log in to Legate", Error: msg, Client: clientName(c), ID: a.ID, CSRF: token, Action: LoginPath}
	if s.upstream != nil {
		p.UpstreamName, p.UpstreamURL = s.upstream.cfg.Name, UpstreamStartPath+"?id="+url.QueryEscape(a.ID)
	}
	return p
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	a, c, ok := s.pendingRequest(w, r.Context(), r.URL.Query().Get("id"))
	if !ok {
		return
	}
	render(w, http.StatusOK, "login", s.loginForm(c, a, s.csrfToken(w, r), ""))
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	token := s.checkForm(w, r)
	if token == "" {
		return
	}
	ctx := r.Context()
	a, c, ok := s.pendingRequest(w, ctx, r.PostFormValue("id"))
	if !ok {
		return
	}
	name, password := r.PostFormValue("username"), r.PostFormValue("password")
	u, err := s.activeUser(ctx, name)
	hash := u.PasswordHash
	if err != nil {
		hash = dummyHash
	}
	if s.guard.closed(name, s.now()) || !s.guard.check(hash, password) || err != nil {
		s.guard.failed(name, s.now())
		s.log.Info("login refused", "client", c.ID)
		render(w, http.StatusUnauthorized, "login", s.loginForm(c, a, token, badLogin))
		return
	}
	s.guard.succeeded(name)
	a.Subject, a.AuthTime, a.Binding = u.Name, s.now().UTC().Truncate(time.Second), hashSecret(token)
	st := &storage{srv: s}
	if err := st.putRequest(ctx, a, ""); err != nil {
		s.log.Error("storing a login", "err", err)
		errorPage(w, http.StatusInternalServerError, "The login could not be recorded.")
		return
	}
	s.renderConsent(w, a, c, u, token)
}

// renderConsent shows the consent page of request a by client c to user
// u, with the browser's form token.
func (s *Server) renderConsent(w http.ResponseWriter, a *authRequest, c store.OAuthClient, u store.User, token string) {
	redirect := a.RedirectURI
	if ru, err := url.Parse(redirect); err == nil {
		ru.RawQuery = ""
		redirect = ru.String()
	}
	render(w, http.StatusOK, "consent", page{Title: "Allow access?", Client: clientName(c), Redirect: redirect, ID: a.ID, CSRF: token, Action: ConsentPath,
		User: u.Name, Tenant: u.Tenant, Role: u.Role, Profile: u.Profile, AccessTTL: s.accessTTL.String()})
}

func (s *Server) consent(w http.ResponseWriter, r *http.Request) {
	token := s.checkForm(w, r)
	if token == "" {
		return
	}
	ctx := r.Context()
	a, c, ok := s.pendingRequest(w, ctx, r.PostFormValue("id"))
	if !ok {
		return
	}
	if a.Subject == "" || subtle.ConstantTimeCompare([]byte(a.Binding), []byte(hashSecret(token))) != 1 {
		errorPage(w, http.StatusForbidden, "Log in first, in this browser.")
		return
	}
	if r.PostFormValue("decision") != "allow" {
		s.log.Info("consent denied", "principal", a.Subject, "client", c.ID)
		(&storage{srv: s}).DeleteAuthRequest(ctx, a.ID)
		op.AuthRequestError(w, r, a, oidc.ErrAccessDenied().WithDescription("the user denied access"), s.provider)
		return
	}
	a.Consented = true
	if err := (&storage{srv: s}).putRequest(ctx, a, ""); err != nil {
		s.log.Error("storing a consent", "err", err)
		errorPage(w, http.StatusInternalServerError, "The consent could not be recorded.")
		return
	}
	s.log.Info("consent given", "principal", a.Subject, "client", c.ID)
	http.Redirect(w, r, s.issuer+CallbackPath+"?id="+url.QueryEscape(a.ID), http.StatusSeeOther)
}
