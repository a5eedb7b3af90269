// Package panel is Legate's web panel: the approval inbox, connectors,
// upstreams, tools, the audit log and the agent's history, as pages
// rendered on the server from templates embedded in the binary. It has no
// state of its own but its login sessions: every page and every form runs
// the admin API in process, as the logged-in token, so the panel can do
// nothing the API would not let that token do, and every change it makes
// is audited by the API with the token's principal.
//
//	h := panel.New(gw.AdminHandler(addr), &panel.Options{Loopback: true})
//	http.Serve(ln, h)
//
// Logging in takes an admin or approver token; the session lives in an
// HttpOnly, SameSite=Strict cookie, and every form carries a CSRF token
// tied to it. The pages run no inline script: the Content-Security-Policy
// allows only the panel's own static files, of which one small script
// reloads the inbox when a request comes or goes.
package panel

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/connections"
	"github.com/legate-mcp/legate/store"
)

//go:embed templates/*.html static/*
var files embed.FS

// Options configure the panel.
type Options struct {
	// Loopback says the panel listens on a loopback address: then only
	// loopback names are accepted as Host, against DNS rebinding.
	Loopback bool
	// AllowedHosts are Host values accepted besides.
	AllowedHosts []string
	// SessionTTL is how long a login lasts (default 12h).
	SessionTTL time.Duration
	// Logger receives the panel's address when Start serves it; nil
	// logs nothing.
	Logger *slog.Logger
	// Listener, when set, is bound at Start's address already, and Start
	// serves on it (a test binds 127.0.0.1:0, so no one takes the port).
	Listener net.Listener
	// ReadHeaderTimeout, ReadTimeout and IdleTimeout bound how long the
	// listener Start opens waits for a client's headers, its whole request
	// and its next request on a keep-alive connection, as `legate serve`'s
	// http: section does for /mcp (zero: 10s, 60s and 120s).
	ReadHeaderTimeout, ReadTimeout, IdleTimeout time.Duration
	// Callback, when set, completes a per-user connection whose consent
	// the provider sent back to the panel's origin (GET
	// /connect/callback, served without a login: the state it carries
	// names the principal), and says what was connected. The panel then
	// shows the outcome with a link to its Connections page.
	// It clears on w the cookie that bound the consent to the browser.
	Callback func(w http.ResponseWriter, r *http.Request) (string, error)
}

// Audit is how the admin API the panel runs on records its audit rows:
// with add, but for reads. The panel's page views read the API, which
// audits an admin's reads across tenants, and would fill the audit log
// with them; they are logged by the API, and only the panel's changes and
// decisions (and every tool call) are audited.
func Audit(add func(store.AuditRow)) func(store.AuditRow) {
	return func(row store.AuditRow) {
		if row.Class != string(legate.ClassRead) {
			add(row)
		}
	}
}

// Panel serves the pages.
type Panel struct {
	api   http.Handler
	opts  Options
	tmpl  *template.Template
	mu    sync.Mutex
	users map[string]*session // by session id
}

// session is one login: the token the API is called with, never sent to
// the browser again, and the CSRF token its forms carry.
type session struct {
	token   string
	csrf    string
	me      principal
	expires time.Time
}

// principal is who logged in, as GET /admin/v1/me answers.
type principal struct {
	Name   string `json:"name"`
	Role   string `json:"role"`
	Tenant string `json:"tenant"`
}

// cookieName names the session cookie.
const cookieName = "legate_panel"

// loginCookie holds the CSRF token of the login form, before any session:
// a page of another site cannot post its own token and log the browser in
// as someone else.
const loginCookie = "legate_panel_login"

// csp forbids every script, style and image that is not the panel's own
// file: no inline script can run even if some text escaped the templates.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// New returns the panel over api, the admin API's handler.
func New(api http.Handler, opts *Options) http.Handler {
	if opts == nil {
		opts = &Options{}
	}
	p := &Panel{api: api, opts: *opts, users: map[string]*session{}}
	if p.opts.SessionTTL == 0 {
		p.opts.SessionTTL = 12 * time.Hour
	}
	p.tmpl = template.Must(template.New("").Funcs(funcs).ParseFS(files, "templates/*.html"))
	static, _ := fs.Sub(files, "static")
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /login", p.loginPage)
	mux.HandleFunc("POST /login", p.login)
	mux.HandleFunc("POST /logout", p.with(p.logout))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/inbox", http.StatusSeeOther) })
	mux.HandleFunc("GET /inbox", p.with(p.inbox))
	mux.HandleFunc("GET /inbox/pending", p.with(p.pending))
	mux.HandleFunc("POST /approvals/{id}/{verb}", p.with(p.decide))
	mux.HandleFunc("GET /connectors", p.with(p.connectors))
	mux.HandleFunc("GET /connectors/new", p.with(p.connectorForm))
	mux.HandleFunc("POST /connectors", p.with(p.addConnector))
	mux.HandleFunc("POST /connectors/{id}/test", p.with(p.testConnector))
	mux.HandleFunc("GET /upstreams", p.with(p.upstreams))
	mux.HandleFunc("POST /upstreams", p.with(p.addUpstream))
	mux.HandleFunc("POST /upstreams/{id}/{verb}", p.with(p.upstreamAction))
	mux.HandleFunc("GET /connections", p.with(p.connections))
	mux.HandleFunc("POST /connections/{instance}/revoke", p.with(p.revokeConnection))
	mux.HandleFunc("POST /connections/{instance}/connect", p.with(p.connect))
	if p.opts.Callback != nil {
		mux.HandleFunc("GET "+connections.CallbackPath, p.callback)
	}
	mux.HandleFunc("GET /tools", p.with(p.tools))
	mux.HandleFunc("GET /audit", p.with(p.audit))
	mux.HandleFunc("GET /budgets", p.with(p.budgets))
	mux.HandleFunc("GET /agent", p.with(p.agent))
	mux.HandleFunc("GET /skills", p.with(skillsPage{p}.list))
	mux.HandleFunc("POST /skills", p.with(skillsPage{p}.install))
	mux.HandleFunc("POST /skills/{name}/{verb}", p.with(skillsPage{p}.action))
	return p.secure(mux)
}

// secure sets the headers every answer carries and refuses a Host that is
// not the panel's and a cross-site Origin on a form.
func (p *Panel) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		// same-origin, not no-referrer: under no-referrer a browser posts
		// this page's own forms with Origin: null, which the forms refuse.
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if p.opts.Loopback && !isLoopbackName(host) && !contains(p.opts.AllowedHosts, r.Host) {
			http.Error(w, fmt.Sprintf("forbidden: Host %q is not accepted by the panel", r.Host), http.StatusForbidden)
			return
		}
		// A browser sends one Origin; a request with more is checked on
		// each, so a good first one cannot carry a bad second. "null" is
		// an opaque origin (a sandboxed frame, a data: URL, a redirect
		// across sites): never the panel's own.
		for _, o := range r.Header.Values("Origin") {
			if r.Method == http.MethodPost && o != "" && !sameOrigin(o, r.Host) {
				http.Error(w, "forbidden: a form from another site", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func isLoopbackName(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

func sameOrigin(origin, host string) bool {
	return origin == "http://"+host || origin == "https://"+host
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// with runs h for a logged-in session, checking the CSRF token of every
// POST; without a session it sends the browser to the login page.
func (p *Panel) with(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s := p.session(r)
		if s == nil {
			if r.Method == http.MethodGet && !strings.HasSuffix(r.URL.Path, "/pending") {
				http.Redirect(w, r, "/login", http.StatusSeeOther)
				return
			}
			http.Error(w, "not logged in", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
			if !checkCSRF(w, r, s.csrf) {
				return
			}
		}
		h(w, r, s)
	}
}

// checkCSRF reports whether the form posted in r carries want, its CSRF
// token (the session's, or before a login the login cookie's); when not,
// it answers 403.
func checkCSRF(w http.ResponseWriter, r *http.Request, want string) bool {
	got := r.PostFormValue("csrf")
	if want == "" || got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		http.Error(w, "forbidden: the form's CSRF token is missing or stale; reload the page", http.StatusForbidden)
		return false
	}
	return true
}

func (p *Panel) session(r *http.Request) *session {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.users[c.Value]
	if s != nil && time.Now().After(s.expires) {
		delete(p.users, c.Value)
		return nil
	}
	return s
}

func randomID() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (p *Panel) loginPage(w http.ResponseWriter, r *http.Request) {
	p.render(w, "login", nil, map[string]any{"Error": r.URL.Query().Get("error"), "CSRF": p.loginToken(w, r)})
}

// loginToken is the login form's CSRF token: the browser's login cookie,
// set anew when it has none.
func (p *Panel) loginToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(loginCookie); err == nil && len(c.Value) >= 32 {
		return c.Value
	}
	v := randomID()
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: v, Path: "/login", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	return v
}

// login checks a token against the admin API (GET /admin/v1/me) and opens
// a session for it. The form must carry the login cookie's CSRF token.
func (p *Panel) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	want := ""
	if c, err := r.Cookie(loginCookie); err == nil {
		want = c.Value
	}
	if !checkCSRF(w, r, want) {
		return
	}
	tok := strings.TrimSpace(r.PostFormValue("token"))
	s := &session{token: tok, csrf: randomID(), expires: time.Now().Add(p.opts.SessionTTL)}
	if err := p.call(r.Context(), s, "GET", "/admin/v1/me", nil, &s.me); err != nil || tok == "" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		p.render(w, "login", nil, map[string]any{"Error": "That token is not an admin or approver token.", "CSRF": want})
		return
	}
	id := randomID()
	p.mu.Lock()
	now := time.Now()
	for k, old := range p.users {
		if now.After(old.expires) {
			delete(p.users, k)
		}
	}
	p.users[id] = s
	p.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: int(p.opts.SessionTTL.Seconds())})
	http.Redirect(w, r, "/inbox", http.StatusSeeOther)
}

func (p *Panel) logout(w http.ResponseWriter, r *http.Request, _ *session) {
	if c, err := r.Cookie(cookieName); err == nil {
		p.mu.Lock()
		delete(p.users, c.Value)
		p.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// call runs one admin API request as s, decoding the answer into out; an
// error answer is returned as an *admin.Error.
func (p *Panel) call(ctx context.Context, s *session, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return p.send(req, s, out)
}

// send runs req, an admin API request, as s (see call).
func (p *Panel) send(req *http.Request, s *session, out any) error {
	_, err := p.sendHeader(req, s, out)
	return err
}

// sendHeader is send, which also returns the answer's header.
func (p *Panel) sendHeader(req *http.Request, s *session, out any) (http.Header, error) {
	req.Header.Set("Authorization", "Bearer "+s.token)
	rec := &recorder{header: http.Header{}}
	p.api.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	if rec.status >= 300 {
		var e struct {
			Error admin.Error `json:"error"`
		}
		json.Unmarshal(rec.body.Bytes(), &e)
		e.Error.Status = rec.status
		if e.Error.Message == "" {
			e.Error.Message = strings.TrimSpace(rec.body.String())
		}
		return rec.header, &e.Error
	}
	if out != nil {
		return rec.header, json.Unmarshal(rec.body.Bytes(), out)
	}
	return rec.header, nil
}

// recorder keeps an in-process answer of the admin API.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}

// render writes page name within the layout.
func (p *Panel) render(w http.ResponseWriter, name string, s *session, data map[string]any) {
	if data == nil {
		data = map[string]any{}
	}
	data["Page"] = name
	if s != nil {
		data["Me"], data["CSRF"] = s.me, s.csrf
	}
	var buf bytes.Buffer
	if err := p.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		http.Error(w, "rendering "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}

var (
	_ http.ResponseWriter = (*recorder)(nil)
	_ http.Handler        = (*http.ServeMux)(nil)
)

// Start serves the panel on addr until ctx ends or stop is called, over
// the admin API api makes for the address bound; with addr "" it does
// nothing. A loopback address accepts only loopback Host names (and
// opts.AllowedHosts).
func Start(ctx context.Context, addr string, api func(listen string) http.Handler, opts *Options) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	ln := o.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", addr); err != nil {
			return nil, fmt.Errorf("panel: listening on %s: %w", addr, err)
		}
	}
	host, _, _ := net.SplitHostPort(ln.Addr().String())
	o.Loopback = isLoopbackName(host)
	srv := &http.Server{Handler: New(api(ln.Addr().String()), &o),
		ReadHeaderTimeout: cmp.Or(o.ReadHeaderTimeout, 10*time.Second),
		ReadTimeout:       cmp.Or(o.ReadTimeout, time.Minute),
		IdleTimeout:       cmp.Or(o.IdleTimeout, 2*time.Minute)}
	go srv.Serve(ln)
	if o.Logger != nil {
		o.Logger.Info("legate panel", "url", "http://"+ln.Addr().String()+"/")
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		<-ctx.Done()
		c, end := context.WithTimeout(context.Background(), 5*time.Second)
		defer end()
		srv.Shutdown(c)
		close(done)
	}()
	return func() { cancel(); <-done }, nil
}
