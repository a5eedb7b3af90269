package server_test

import (
	"context"
	"encoding/json"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/connections"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/server/servertest"
	"github.com/legate-mcp/legate/store/sqlite"
)

// connectEnv is a gateway whose panel listens on an address of its own,
// with per-user Slack instances whose OAuth app is a stand-in provider's:
// slack is shared, acme-slack belongs to tenant acme, echo is not per
// user, and the upstream notes (tenant acme) has auth: oauth. authYAML is
// its auth section.
type connectEnv struct {
	st       *sqlite.Store
	gw       *server.Gateway
	provider string // the stand-in's base URL
	gateway  string // the gateway's base URL
	panel    string // the panel's base URL
	// alice is an approver of acme, bob one of globex.
	alice, bob string
}

func newConnectEnv(t *testing.T, authYAML string) *connectEnv {
	t.Helper()
	p := oauthtest.New("panel-client", "panel-secret", "xoxp-")
	prov := oauthtest.Serve(t, p)
	t.Setenv("PANEL_CONNECT_SECRET", "panel-secret")
	app := `{client_id: panel-client, client_secret: {env: PANEL_CONNECT_SECRET}, authorize_url: "` + prov + `/oauth/authorize", token_url: "` + prov + `/oauth/token"}`
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	panelAddr := pl.Addr().String()
	g := servertest.Start(t, `
auth: `+authYAML+`
connectors:
  - {id: slack, type: slack, credentials_mode: per_user, oauth: `+app+`}
  - {id: acme-slack, type: slack, tenant: acme, credentials_mode: per_user, oauth: `+app+`}
  - {id: echo, type: echo-test}
upstreams:
  - {id: notes, url: "http://127.0.0.1:1/mcp", auth: oauth, tenant: acme}
`, servertest.With(func(o *server.Options) { o.PanelAddr, o.PanelListener = panelAddr, pl }))
	e := &connectEnv{st: g.Store, gw: g.GW, provider: prov, gateway: g.URL, panel: "http://" + panelAddr,
		alice: token(t, g.Store, auth.Principal{Name: "alice", Tenant: "acme", Role: auth.RoleApprover}),
		bob:   token(t, g.Store, auth.Principal{Name: "bob", Tenant: "globex", Role: auth.RoleApprover})}
	waitFor(t, "the panel to listen", func() bool {
		resp, err := http.Get(e.panel + "/login")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	})
	return e
}

// noFollow does not follow redirects, keeping c's cookies.
func noFollow(c *http.Client) *http.Client {
	return &http.Client{Jar: c.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// A person connects their own account from the panel's Connections page:
// the page lists what they may connect, Connect sends the browser to the
// provider's consent, which comes back to the panel's own origin, and the page then
// lists the connection. A form without its CSRF token is refused, and a
// principal of another tenant cannot connect acme's instance.
func TestPanelConnectsYourOwnAccount(t *testing.T) {
	e := newConnectEnv(t, "{tokens: true}")
	c, base, csrf := panelLogin(t, e.panel, e.alice)
	resp, err := c.Get(base + "/connections")
	if err != nil {
		t.Fatal(err)
	}
	page := readAll(t, resp)
	for _, id := range []string{"slack", "acme-slack", "notes"} {
		if !strings.Contains(page, `id="can-`+id+`"`) || !strings.Contains(page, `id="connect-`+id+`">Connect<`) {
			t.Errorf("alice's Connections page does not offer to connect %s:\n%s", id, page)
		}
	}
	if strings.Contains(page, `id="can-echo"`) {
		t.Errorf("the Connections page offers to connect an instance with shared credentials:\n%s", page)
	}

	resp, err = noFollow(c).Get(base + "/connect/slack")
	if err != nil {
		t.Fatal(err)
	}
	if readAll(t, resp); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the panel serves the gateway's unsigned /connect/slack: %d", resp.StatusCode)
	}
	resp, err = noFollow(c).PostForm(base+"/connections/slack/connect", url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	if readAll(t, resp); resp.StatusCode != http.StatusForbidden {
		t.Errorf("connecting without the CSRF token: %d, want 403", resp.StatusCode)
	}

	// Connect answers a page that sends the browser on to the provider's
	// consent (a Refresh, not a redirect the form-action 'self' of the
	// page's CSP would stop), with a link to it.
	resp, err = noFollow(c).PostForm(base+"/connections/slack/connect", url.Values{"csrf": {csrf}})
	if err != nil {
		t.Fatal(err)
	}
	page = readAll(t, resp)
	refresh, ok := strings.CutPrefix(resp.Header.Get("Refresh"), "0; url=")
	link := regexp.MustCompile(`<a id="consent" href="([^"]+)"`).FindStringSubmatch(page)
	consent, err := url.Parse(refresh)
	if resp.StatusCode != http.StatusOK || !ok || err != nil || !strings.HasPrefix(refresh, e.provider+"/oauth/authorize?") || link == nil || html.UnescapeString(link[1]) != refresh {
		t.Fatalf("Connect: %d, Refresh %q, want the provider's consent and a link to it:\n%s", resp.StatusCode, resp.Header.Get("Refresh"), page)
	}
	if got := consent.Query().Get("redirect_uri"); got != base+connections.CallbackPath {
		t.Errorf("the consent comes back to %q, want the panel's own %q", got, base+connections.CallbackPath)
	}
	q := consent.Query()
	q.Set("user", "alice-account")
	consent.RawQuery = q.Encode()
	resp, err = c.Get(consent.String()) // the provider approves and sends the browser back
	if err != nil {
		t.Fatal(err)
	}
	page = readAll(t, resp)
	back := regexp.MustCompile(`<a id="back" href="([^"]+)"`).FindStringSubmatch(page)
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Host != strings.TrimPrefix(base, "http://") || back == nil ||
		!strings.Contains(page, "slack is connected for alice") {
		t.Fatalf("the callback on the panel: %d at %s:\n%s", resp.StatusCode, resp.Request.URL, page)
	}
	resp, err = c.Get(base + html.UnescapeString(back[1]))
	if err != nil {
		t.Fatal(err)
	}
	page = readAll(t, resp)
	if !strings.Contains(page, `id="msg">slack is connected for alice`) ||
		!regexp.MustCompile(`id="conn-slack-alice"><td>slack</td><td>alice</td><td>acme</td>\s*<td>connected</td>`).MatchString(page) ||
		!strings.Contains(page, `id="connect-slack">Reconnect<`) || !strings.Contains(page, `id="connect-acme-slack">Connect<`) {
		t.Fatalf("the Connections page after connecting:\n%s", page)
	}
	if !server.ConnectionsOf(e.gw).Connected(context.Background(), "acme", "alice", "slack") {
		t.Fatal("alice's connection to slack is not stored")
	}

	// A consent the person refused comes back as the reason, with the
	// way back.
	resp, err = c.Get(base + connections.CallbackPath + "?error=access_denied&state=x")
	if err != nil {
		t.Fatal(err)
	}
	page = readAll(t, resp)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "access_denied") || !strings.Contains(page, `id="back" href="/connections?error=`) {
		t.Errorf("a refused consent on the panel: %d\n%s", resp.StatusCode, page)
	}

	// bob, of globex, is offered the shared instance alone, and connecting
	// acme's is refused with the reason on the page.
	c, base, csrf = panelLogin(t, e.panel, e.bob)
	resp, _ = c.Get(base + "/connections")
	page = readAll(t, resp)
	if !strings.Contains(page, `id="can-slack"`) || strings.Contains(page, `id="can-acme-slack"`) || strings.Contains(page, `id="can-notes"`) {
		t.Errorf("bob's Connections page offers acme's, or not the shared instance:\n%s", page)
	}
	resp, err = c.PostForm(base+"/connections/acme-slack/connect", url.Values{"csrf": {csrf}})
	if err != nil {
		t.Fatal(err)
	}
	page = readAll(t, resp)
	if resp.Request.URL.Path != "/connections" || !strings.Contains(page, `class="error"`) || !strings.Contains(page, "no connector instance") {
		t.Fatalf("bob connecting acme's instance: at %s:\n%s", resp.Request.URL, page)
	}
	if server.ConnectionsOf(e.gw).Connected(context.Background(), "globex", "bob", "acme-slack") {
		t.Fatal("bob connected acme's instance")
	}
}

// connectable is GET /admin/v1/connections's "connectable".
type connectable struct {
	Connectable []connections.Connectable `json:"connectable"`
	Principal   string                    `json:"principal"`
}

// The admin API answers what the caller may connect, of its tenant or
// shared, and the consent URL that connects the caller's own account;
// not without authentication. On a hardened deployment, connecting one's
// own account needs no pin: it changes no part of the deployment.
func TestAdminConnectableAndConnect(t *testing.T) {
	e := newConnectEnv(t, "{tokens: true, hardened: true}")
	api := httptest.NewServer(server.AdminHandler(e.gw, "127.0.0.1:0"))
	t.Cleanup(api.Close)
	do := func(method, path, tok string, out any) int {
		t.Helper()
		req, _ := http.NewRequest(method, api.URL+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil && resp.StatusCode == http.StatusOK {
			if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode
	}
	if code := do("GET", "/admin/v1/connections", "", nil); code != http.StatusUnauthorized {
		t.Errorf("listing without a token: %d", code)
	}
	if code := do("POST", "/admin/v1/connections/slack/connect", "", nil); code != http.StatusUnauthorized {
		t.Errorf("connecting without a token: %d", code)
	}

	for who, want := range map[string][]connections.Connectable{
		"alice": {
			{Instance: "acme-slack", Kind: "slack", Tenant: "acme", Status: "not_connected"},
			{Instance: "notes", Kind: "upstream", Tenant: "acme", Status: "not_connected"},
			{Instance: "slack", Kind: "slack", Status: "not_connected"},
		},
		"bob": {{Instance: "slack", Kind: "slack", Status: "not_connected"}},
	} {
		var got connectable
		tok := map[string]string{"alice": e.alice, "bob": e.bob}[who]
		if code := do("GET", "/admin/v1/connections", tok, &got); code != http.StatusOK || got.Principal != who || !slices.Equal(got.Connectable, want) {
			t.Errorf("%s's connectable: %d %q %+v, want %+v", who, code, got.Principal, got.Connectable, want)
		}
	}

	var res struct{ URL string }
	if code := do("POST", "/admin/v1/connections/slack/connect", e.alice, &res); code != http.StatusOK || !strings.HasPrefix(res.URL, e.provider+"/oauth/authorize?") {
		t.Fatalf("alice connecting slack: %d %q", code, res.URL)
	}
	consent, _ := url.Parse(res.URL)
	if got, want := consent.Query().Get("redirect_uri"), api.URL+connections.CallbackPath; got != want {
		t.Errorf("the consent comes back to %q, want the origin asked, %q", got, want)
	}
	// Revoking one's own connection needs no pin either (404: bob has
	// none to revoke); another's does.
	for q, want := range map[string]int{"principal=bob&tenant=globex": http.StatusNotFound, "principal=alice&tenant=acme": http.StatusForbidden, "principal=bob&tenant=acme": http.StatusForbidden} {
		if code := do("DELETE", "/admin/v1/connections/slack?"+q, e.bob, nil); code != want {
			t.Errorf("bob: DELETE the connection of %s: %d, want %d", q, code, want)
		}
	}
	for path, want := range map[string]int{
		"/admin/v1/connections/acme-slack/connect": http.StatusNotFound,   // acme's, bob is of globex
		"/admin/v1/connections/nowhere/connect":    http.StatusNotFound,   // no such instance
		"/admin/v1/connections/echo/connect":       http.StatusBadRequest, // no oauth app
	} {
		if code := do("POST", path, e.bob, nil); code != want {
			t.Errorf("bob: POST %s: %d, want %d", path, code, want)
		}
	}
}
