package server_test

import (
	"context"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/panel"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/server/servertest"
	"github.com/legate-mcp/legate/store"
)

// panelClient logs in to a panel over gw's admin API with tok and returns
// a client holding the session cookie, the panel's URL and the CSRF token
// of its forms.
func panelClient(t *testing.T, gw *server.Gateway, tok string) (*http.Client, string, string) {
	t.Helper()
	ts := httptest.NewServer(panel.New(server.AdminHandler(gw, "127.0.0.1:0"), &panel.Options{Loopback: true}))
	t.Cleanup(ts.Close)
	return panelLogin(t, ts.URL, tok)
}

// panelLogin logs in to the panel at base with tok, as panelClient does.
func panelLogin(t *testing.T, base, tok string) (*http.Client, string, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp := servertest.PanelLogin(t, c, base, tok)
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusOK {
		return c, base, ""
	}
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token on the inbox: %s", body)
	}
	return c, base, m[1]
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The panel shows an approver its own tenant's requests only, decides
// them as the approver (audited), and refuses a form without its CSRF token.
func TestPanelInboxDecidesAsTheLoggedInApprover(t *testing.T) {
	st, gw, _, ids := tenantInboxGateway(t)
	ann := token(t, st, auth.Principal{Name: "ann", Tenant: "acme", Role: auth.RoleApprover})
	c, base, csrf := panelClient(t, gw, ann)
	resp, err := c.Get(base + "/inbox")
	if err != nil {
		t.Fatal(err)
	}
	page := readAll(t, resp)
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP %q", csp)
	}
	if regexp.MustCompile(`<script>|<script [^>]*>[^<]`).MatchString(page) || strings.Contains(page, " on"+"click=") {
		t.Errorf("an inline script on the inbox")
	}
	if !strings.Contains(page, ids["acme"]) || strings.Contains(page, ids["globex"]) || strings.Contains(page, ids[""]) {
		t.Fatalf("the inbox of acme's approver shows other tenants, or not its own:\n%s", page)
	}
	resp, _ = c.PostForm(base+"/approvals/"+ids["acme"]+"/deny", url.Values{"reason": {"no"}})
	if readAll(t, resp); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a form without its CSRF token: %d", resp.StatusCode)
	}
	resp, _ = c.PostForm(base+"/approvals/"+ids["globex"]+"/deny", url.Values{"reason": {"no"}, "csrf": {csrf}})
	readAll(t, resp)
	resp, _ = c.PostForm(base+"/approvals/"+ids["acme"]+"/deny", url.Values{"reason": {"not today"}, "csrf": {csrf}})
	readAll(t, resp)
	ctx := context.Background()
	if a, _ := st.Approvals().Get(ctx, ids["acme"]); a.State != store.StateDenied || a.Decider != "ann" || a.Reason != "not today" {
		t.Errorf("acme's request after the panel's deny: %+v", a)
	}
	if a, _ := st.Approvals().Get(ctx, ids["globex"]); a.State != store.StatePending {
		t.Errorf("globex's request decided through acme's panel: %+v", a)
	}
	waitFor(t, "the audit row of the panel's decision", func() bool {
		rows, _ := st.Audit().Query(ctx, store.AuditQuery{Principal: "ann", Tool: "admin.approvals.deny"})
		return len(rows) >= 1
	})
	resp, _ = c.Get(base + "/connectors")
	if page := readAll(t, resp); !strings.Contains(page, "admin role") {
		t.Errorf("an approver on the connectors page: %s", page)
	}
}

// A wrong token does not log in; an admin adds a connector through the
// form generated from its type's spec.
func TestPanelLoginAndConnectorForm(t *testing.T) {
	st, gw, _, _ := tenantInboxGateway(t)
	if _, base, csrf := panelClient(t, gw, "lgt_wrong"); csrf != "" || base == "" {
		t.Fatal("a wrong token logged in")
	}
	root := token(t, st, auth.Principal{Name: "root", Role: auth.RoleAdmin})
	c, base, csrf := panelClient(t, gw, root)
	resp, _ := c.Get(base + "/connectors/new?type=echo-test")
	if form := readAll(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(form, `name="id"`) {
		t.Fatalf("the form: %d %s", resp.StatusCode, form)
	}
	resp, _ = c.PostForm(base+"/connectors", url.Values{"csrf": {csrf}, "type": {"echo-test"}, "id": {"from-panel"}})
	if page := readAll(t, resp); !strings.Contains(page, "added connector from-panel") {
		t.Fatalf("after the form: %s", page)
	}
	if _, err := st.Connectors().Get(context.Background(), "from-panel"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/inbox", "/upstreams", "/tools", "/audit", "/tools?tenant=acme"} {
		resp, _ := c.Get(base + p)
		if page := readAll(t, resp); resp.StatusCode != http.StatusOK || strings.Contains(page, `class="error"`) {
			t.Errorf("%s: %d %s", p, resp.StatusCode, page)
		}
	}
}

// A panel asked for without any token to log in with is refused, and the
// server does not start.
func TestPanelWithoutATokenIsRefused(t *testing.T) {
	st := memStore(t)
	cfg, err := config.Parse([]byte("panel: {listen: \"127.0.0.1:0\"}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := gw.ServeHTTP(context.Background(), ln); err == nil || !strings.Contains(err.Error(), "LEGATE_ADMIN_TOKEN") {
		t.Fatalf("serving with a panel and no token: %v", err)
	}
}

// The session cookie is HttpOnly and SameSite=Strict, a user token does
// not log in, and no page runs an inline script.
func TestPanelSessionCookieAndPages(t *testing.T) {
	st, gw, _, _ := tenantInboxGateway(t)
	ts := httptest.NewServer(panel.New(server.AdminHandler(gw, "127.0.0.1:0"), &panel.Options{Loopback: true}))
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	noRedirect := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	user := token(t, st, auth.Principal{Name: "bob", Role: auth.RoleUser})
	resp := servertest.PanelLogin(t, noRedirect, ts.URL, user)
	if readAll(t, resp); resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Errorf("a user token logging in: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	root := token(t, st, auth.Principal{Name: "root", Role: auth.RoleAdmin})
	resp = servertest.PanelLogin(t, noRedirect, ts.URL, root)
	readAll(t, resp)
	cs := resp.Cookies()
	if len(cs) != 1 || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode || strings.Contains(cs[0].Value, root) {
		t.Fatalf("session cookie %+v", cs)
	}
	c, base, _ := panelClient(t, gw, root)
	inline := regexp.MustCompile(`<script(\s[^>]*)?>\s*[^<\s]|\son[a-z]+=|javascript:`)
	for _, p := range []string{"/login", "/inbox", "/connectors", "/connectors/new?type=echo-test", "/upstreams", "/connections", "/tools", "/audit", "/agent"} {
		resp, err := c.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		page := readAll(t, resp)
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		if inline.MatchString(page) {
			t.Errorf("%s: an inline script: %s", p, inline.FindString(page))
		}
	}
	resp, _ = http.Get(base + "/inbox/pending")
	if readAll(t, resp); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the inbox's poll without a session: %d", resp.StatusCode)
	}
}

// A form posted to the panel from another site is refused, whether its
// Origin is the only one, follows the panel's own, or is "null" (an
// opaque origin: a sandboxed frame, a data: URL).
func TestPanelFormsCheckEveryOrigin(t *testing.T) {
	st, gw, _, _ := tenantInboxGateway(t)
	ts := httptest.NewServer(panel.New(server.AdminHandler(gw, "127.0.0.1:0"), &panel.Options{Loopback: true}))
	t.Cleanup(ts.Close)
	root := token(t, st, auth.Principal{Name: "root", Role: auth.RoleAdmin})
	for name, tc := range map[string]struct {
		origins []string
		status  int
	}{
		"the panel's":                 {[]string{ts.URL}, http.StatusSeeOther},
		"another site's":              {[]string{"https://evil.example"}, http.StatusForbidden},
		"the panel's, then another's": {[]string{ts.URL, "https://evil.example"}, http.StatusForbidden},
		"null":                        {[]string{"null"}, http.StatusForbidden},
	} {
		t.Run(name, func(t *testing.T) {
			c, csrf := loginForm(t, ts.URL)
			req, _ := http.NewRequest("POST", ts.URL+"/login", strings.NewReader(url.Values{"token": {root}, "csrf": {csrf}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header["Origin"] = tc.origins
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if page := readAll(t, resp); resp.StatusCode != tc.status {
				t.Fatalf("login posted with Origin %q: %d %s, want %d", tc.origins, resp.StatusCode, page, tc.status)
			}
		})
	}
}

// loginForm opens the panel's login page at base in a new browser (a
// client with its own cookies, not following redirects) and returns it
// with the form's CSRF token.
func loginForm(t *testing.T, base string) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(readAll(t, resp))
	if m == nil {
		return c, ""
	}
	return c, html.UnescapeString(m[1])
}

// Login CSRF: a page of another site posts the login form with the
// attacker's own token, to sign the victim's browser in to the
// attacker's session. The form must carry the CSRF token of the login
// page this browser opened: without it, or with another browser's, the
// login is refused and no session starts; a browser that opened the page
// logs in.
func TestPanelLoginNeedsItsCSRFToken(t *testing.T) {
	st, gw, _, _ := tenantInboxGateway(t)
	ts := httptest.NewServer(panel.New(server.AdminHandler(gw, "127.0.0.1:0"), &panel.Options{Loopback: true}))
	t.Cleanup(ts.Close)
	attacker := token(t, st, auth.Principal{Name: "mallory", Role: auth.RoleAdmin})
	_, attackers := loginForm(t, ts.URL) // a token the attacker's own browser was given
	post := func(c *http.Client, form url.Values) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", ts.URL+"/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
		return resp
	}
	session := func(resp *http.Response) bool {
		for _, c := range resp.Cookies() {
			if c.Name == "legate_panel" && c.Value != "" {
				return true
			}
		}
		return false
	}
	for name, form := range map[string]url.Values{
		"no token":               {"token": {attacker}},
		"another browser's":      {"token": {attacker}, "csrf": {attackers}},
		"an empty token":         {"token": {attacker}, "csrf": {""}},
		"not the page's (typed)": {"token": {attacker}, "csrf": {"x"}},
	} {
		victim, _ := loginForm(t, ts.URL) // the victim has opened the panel before
		if resp := post(victim, form); resp.StatusCode != http.StatusForbidden || session(resp) {
			t.Errorf("a login form with %s CSRF token: %d, session %v; want 403 and none", name, resp.StatusCode, session(resp))
		}
	}
	// A browser that never opened the login page has no login cookie.
	fresh := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if resp := post(fresh, url.Values{"token": {attacker}, "csrf": {attackers}}); resp.StatusCode != http.StatusForbidden || session(resp) {
		t.Errorf("a login from a browser without the login cookie: %d, session %v", resp.StatusCode, session(resp))
	}
	// The page's own form signs in.
	c, csrf := loginForm(t, ts.URL)
	if resp := post(c, url.Values{"token": {attacker}, "csrf": {csrf}}); resp.StatusCode != http.StatusSeeOther || !session(resp) {
		t.Errorf("the login page's own form: %d, session %v; want 303 and a session", resp.StatusCode, session(resp))
	}
}

// The add-connector form makes a per-user instance: the credentials mode
// and the OAuth app reach the store, the client secret as a reference.
func TestPanelConnectorFormPerUser(t *testing.T) {
	ctx := context.Background()
	st, gw, _, _ := tenantInboxGateway(t)
	c, base, csrf := panelClient(t, gw, token(t, st, auth.Principal{Name: "root", Role: auth.RoleAdmin}))
	resp, _ := c.Get(base + "/connectors/new?type=slack")
	if form := readAll(t, resp); !strings.Contains(form, `name="credentials_mode"`) || !strings.Contains(form, `name="oauth.client_id"`) {
		t.Fatalf("the form has no credentials mode or OAuth app: %s", form)
	}
	form := url.Values{"csrf": {csrf}, "type": {"slack"}, "id": {"team-slack"}, "credentials_mode": {"per_user"}}
	resp, _ = c.PostForm(base+"/connectors", form)
	if page := readAll(t, resp); !strings.Contains(page, "oauth: is required with credentials_mode per_user") {
		t.Fatalf("per_user without an OAuth app: %s", page)
	}
	form.Set("oauth.client_id", "1234.5678")
	form.Set("ref.oauth.client_secret", "env:TEAM_SLACK_SECRET")
	form.Set("oauth.scopes", "channels:read, chat:write")
	resp, _ = c.PostForm(base+"/connectors", form)
	if page := readAll(t, resp); !strings.Contains(page, "added connector team-slack") {
		t.Fatalf("after the form: %s", page)
	}
	rec, err := st.Connectors().Get(ctx, "team-slack")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"credentials_mode":"per_user","oauth":{"client_id":"1234.5678","client_secret":{"env":"TEAM_SLACK_SECRET"},"scopes":["channels:read","chat:write"]}}`
	if string(rec.Access) != want {
		t.Fatalf("stored access %s, want %s", rec.Access, want)
	}
}
