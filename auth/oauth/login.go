package oauth

import (
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/legate-mcp/legate/auth/oauth/limits"
	"github.com/legate-mcp/legate/auth/oauth/redirecturi"
	"github.com/legate-mcp/legate/store"
)

//go:embed templates/*.html
var templateFS embed.FS

var pages = template.Must(template.ParseFS(templateFS, "templates/*.html"))

// badLogin is the one message of a failed login, whether the account
// exists, is disabled, or the password is wrong.
const badLogin = "Wrong user name or password."

type page struct {
	Title, Error, Client, Redirect, ID, CSRF, Action string
	RedirectHost                                     string
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
	// same-origin, not no-referrer: under no-referrer a browser posts
	// this page's own forms with Origin: null, which the forms refuse.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	pages.ExecuteTemplate(w, name, p)
}

func errorPage(w http.ResponseWriter, status int, msg string) {
	render(w, status, "error", page{Title: "Cannot continue", Error: msg})
}

// checkForm checks a posted form's origin and CSRF token and returns the
// authorization request it is about, with its client, taken from the
// browser that made it; on refusal the error page is written.
func (s *Server) checkForm(w http.ResponseWriter, r *http.Request) (*authRequest, store.OAuthClient, bool) {
	for _, o := range r.Header.Values("Origin") { // each of them: a good first one cannot carry a bad second
		if o != "" && o != s.issuer {
			errorPage(w, http.StatusForbidden, "This form was posted from another site.")
			return nil, store.OAuthClient{}, false
		}
	}
	a, c, ok := s.pendingRequest(w, r, r.PostFormValue("id"))
	if !ok {
		return nil, store.OAuthClient{}, false
	}
	want := s.formToken(s.browserValue(r), a.ID)
	if subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(want)) != 1 {
		errorPage(w, http.StatusForbidden, "The form expired or cookies are blocked: start again from your application.")
		return nil, store.OAuthClient{}, false
	}
	return a, c, true
}

// pendingRequest loads the authorization request a page is about, with
// its client, when r comes from the browser that made it and no code was
// issued for it yet; on failure the error page is written.
func (s *Server) pendingRequest(w http.ResponseWriter, r *http.Request, id string) (*authRequest, store.OAuthClient, bool) {
	ctx := r.Context()
	st := &storage{srv: s}
	a, err := st.request(ctx, id)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.Error("reading an authorization request", "err", err)
		}
		errorPage(w, http.StatusBadRequest, "This login request is unknown or has expired.")
		return nil, store.OAuthClient{}, false
	}
	if !s.sameBrowser(r, a) {
		s.log.Info("an authorization request reached from another browser", "client", a.ClientID)
		errorPage(w, http.StatusForbidden, "This login was started in another browser, or cookies are blocked. Never sign in through a link someone sent you: connect again from your own application.")
		return nil, store.OAuthClient{}, false
	}
	if a.codeIssued {
		errorPage(w, http.StatusBadRequest, "This login is complete already: connect again from your application.")
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
	a, c, ok := s.pendingRequest(w, r, r.URL.Query().Get("id"))
	if !ok {
		return
	}
	render(w, http.StatusOK, "login", s.loginForm(c, a, s.formToken(s.browserValue(r), a.ID), ""))
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	source := limits.Source(r)
	if wait := s.loginLimit.Allow(source, s.now()); wait > 0 {
		tooMany(w, wait, true)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, limits.MaxFormBytes)
	a, c, ok := s.checkForm(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	token := r.PostFormValue("csrf")
	name, password := r.PostFormValue("username"), r.PostFormValue("password")
	if len(name) > limits.MaxUserNameLen {
		name = name[:limits.MaxUserNameLen] // no such user: refused like any other
	}
	if wait := s.guard.Wait(name, source, s.now()); wait > 0 {
		secs := limits.RetryAfter(w, wait)
		render(w, http.StatusTooManyRequests, "login", s.loginForm(c, a, token, fmt.Sprintf("Too many failed attempts: wait %d seconds, then try again.", secs)))
		return
	}
	u, err := s.activeUser(ctx, name)
	hash := u.PasswordHash
	if err != nil {
		hash = dummyHash
	}
	if !s.guard.Check(func() bool { return CheckPassword(hash, password) }) || err != nil {
		s.guard.Failed(name, source, s.now())
		s.log.Info("login refused", "client", c.ID, "source", source)
		render(w, http.StatusUnauthorized, "login", s.loginForm(c, a, token, badLogin))
		return
	}
	s.guard.Succeeded(name, source)
	a.Subject, a.AuthTime = u.Name, s.now().UTC().Truncate(time.Second)
	if err := (&storage{srv: s}).putRequest(ctx, a); err != nil {
		s.log.Error("storing a login", "err", err)
		errorPage(w, http.StatusInternalServerError, "The login could not be recorded.")
		return
	}
	s.renderConsent(w, a, c, u, token)
}

// renderConsent shows the consent page of request a by client c to user
// u, with the browser's form token.
func (s *Server) renderConsent(w http.ResponseWriter, a *authRequest, c store.OAuthClient, u store.User, token string) {
	redirect, host := a.RedirectURI, a.RedirectURI
	if ru, err := url.Parse(redirect); err == nil {
		ru.RawQuery = ""
		redirect, host = ru.String(), redirectHost(ru)
	}
	render(w, http.StatusOK, "consent", page{Title: "Allow access?", Client: clientName(c), Redirect: redirect, RedirectHost: host, ID: a.ID, CSRF: token, Action: ConsentPath,
		User: u.Name, Tenant: u.Tenant, Role: u.Role, Profile: u.Profile, AccessTTL: s.accessTTL.String()})
}

// redirectHost names where a redirect URI sends the browser, as a person
// reads it: the host of an http(s) URI (the client's name is its own
// claim; the host is not), the app of a private-use scheme.
func redirectHost(u *url.URL) string {
	switch u.Scheme {
	case "http", "https":
		if redirecturi.IsLoopback(u.Hostname()) {
			return u.Hostname() + " (an application on this computer)"
		}
		return u.Hostname()
	}
	return "the application that opens " + u.Scheme + ": links"
}

func (s *Server) consent(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, limits.MaxFormBytes)
	a, c, ok := s.checkForm(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	if a.Subject == "" {
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
	if err := (&storage{srv: s}).putRequest(ctx, a); err != nil {
		s.log.Error("storing a consent", "err", err)
		errorPage(w, http.StatusInternalServerError, "The consent could not be recorded.")
		return
	}
	s.log.Info("consent given", "principal", a.Subject, "client", c.ID)
	http.Redirect(w, r, s.issuer+CallbackPath+"?id="+url.QueryEscape(a.ID), http.StatusSeeOther)
}
