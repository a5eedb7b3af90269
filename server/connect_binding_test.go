package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/connections"
	"github.com/legate-mcp/legate/server"
)

// person is one person's browser: a cookie jar of its own.
type person struct {
	t *testing.T
	c *http.Client
}

func newPerson(t *testing.T) *person {
	jar, _ := cookiejar.New(nil)
	return &person{t: t, c: &http.Client{Jar: jar}}
}

// consent opens a provider's consent URL in p's browser, approving as
// the provider's user account, and follows it back to Legate; it
// returns the last page's status and body.
func (p *person) consent(u, account string) (int, string) {
	p.t.Helper()
	cu, err := url.Parse(u)
	if err != nil {
		p.t.Fatal(err)
	}
	q := cu.Query()
	q.Set("user", account)
	cu.RawQuery = q.Encode()
	res, err := p.c.Get(cu.String())
	if err != nil {
		p.t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.HasSuffix(res.Request.URL.Path, connections.CallbackPath) {
		p.t.Fatalf("the consent did not come back to Legate's callback: %s at %s", res.Status, res.Request.URL)
	}
	return res.StatusCode, string(b)
}

// startOnGateway starts a consent of p's own account (bearer's) to slack
// over the gateway's admin API, as a browser page of the gateway would,
// and returns the provider's consent URL.
func (p *person) startOnGateway(base, bearer string) string {
	p.t.Helper()
	req, _ := http.NewRequest("POST", base+"/admin/v1/connections/slack/connect", nil)
	req.Header.Set("Authorization", "Bearer "+bearer)
	res, err := p.c.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct{ URL string }
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK || out.URL == "" {
		p.t.Fatalf("starting a consent: %s %v", res.Status, err)
	}
	return out.URL
}

// The attack on the gateway's listener: mallory starts a consent of her
// own and sends the provider's consent URL to alice, who is signed in at
// the provider; alice's browser approves and lands on Legate's callback.
// It is refused (the consent is bound to mallory's browser) and nothing
// is connected for mallory. In mallory's own browser the consent
// completes, for her; the same state brought back again is refused.
func TestConsentIsBoundToTheBrowserThatStartedIt(t *testing.T) {
	e := newConnectEnv(t, "{tokens: true}")
	ctx := context.Background()
	mallory := token(t, e.st, auth.Principal{Name: "mallory", Tenant: "acme", Role: auth.RoleApprover})
	malloryBrowser, aliceBrowser := newPerson(t), newPerson(t)

	consent := malloryBrowser.startOnGateway(e.gateway, mallory)
	callback := mustURL(t, e.gateway+connections.CallbackPath)
	kept := malloryBrowser.c.Jar.Cookies(callback) // to bring the state back later
	status, page := aliceBrowser.consent(consent, "alice-account")
	if status == http.StatusOK || strings.Contains(page, "is connected") || !strings.Contains(page, "started in another browser") {
		t.Errorf("mallory's consent completed in alice's browser: %d: %s", status, page)
	}
	if server.ConnectionsOf(e.gw).Connected(ctx, "acme", "mallory", "slack") {
		t.Fatal("alice's account was connected for mallory")
	}

	status, page = malloryBrowser.consent(consent, "mallory-account")
	if status != http.StatusOK || !strings.Contains(page, "slack is connected for mallory (tenant acme)") {
		t.Fatalf("mallory's consent in her own browser: %d: %s", status, page)
	}
	if !server.ConnectionsOf(e.gw).Connected(ctx, "acme", "mallory", "slack") {
		t.Fatal("mallory's connection is not stored")
	}

	// The same consent again (the provider approves anew, with the same
	// state), in a browser that kept its cookie: refused.
	malloryBrowser.c.Jar.SetCookies(callback, kept)
	if status, page = malloryBrowser.consent(consent, "mallory-account"); status == http.StatusOK || !strings.Contains(page, "used already") {
		t.Errorf("a replayed state: %d: %s", status, page)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// The same attack through the panel, whose listener serves the callback
// too: mallory's Connect button starts a consent bound to her browser;
// alice's browser, given its consent URL, is refused on the panel's
// callback; mallory's own completes.
func TestPanelConsentIsBoundToTheBrowserThatStartedIt(t *testing.T) {
	e := newConnectEnv(t, "{tokens: true}")
	ctx := context.Background()
	mallory := token(t, e.st, auth.Principal{Name: "mallory", Tenant: "acme", Role: auth.RoleApprover})
	c, base, csrf := panelLogin(t, e.panel, mallory)
	res, err := c.PostForm(base+"/connections/slack/connect", url.Values{"csrf": {csrf}})
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, res)
	consent, ok := strings.CutPrefix(res.Header.Get("Refresh"), "0; url=")
	if !ok || !strings.HasPrefix(consent, e.provider+"/oauth/authorize?") {
		t.Fatalf("the panel's Connect: %s, Refresh %q", res.Status, res.Header.Get("Refresh"))
	}
	malloryBrowser, aliceBrowser := &person{t: t, c: c}, newPerson(t)
	status, page := aliceBrowser.consent(consent, "alice-account")
	if status == http.StatusOK || strings.Contains(page, "is connected") || !strings.Contains(page, "started in another browser") {
		t.Errorf("mallory's consent completed in alice's browser, on the panel: %d: %s", status, page)
	}
	if server.ConnectionsOf(e.gw).Connected(ctx, "acme", "mallory", "slack") {
		t.Fatal("alice's account was connected for mallory")
	}
	status, page = malloryBrowser.consent(consent, "mallory-account")
	if status != http.StatusOK || !strings.Contains(page, `id="who"><strong>slack is connected for mallory (tenant acme)</strong>`) {
		t.Fatalf("mallory's consent in her own browser, on the panel: %d: %s", status, page)
	}
}

// On a listener beyond loopback, the guard lets the connect page's own
// form through with its own Origin (allowed_origins need not list
// Legate's public name), and nothing else: /mcp with that Origin, or the
// form with another site's or "null", is refused.
func TestGuardLetsTheConnectFormThroughFromItsOwnOrigin(t *testing.T) {
	e := newConnectEnv(t, "{tokens: true}")
	h := e.gw.Handler("203.0.113.7:443")
	for name, c := range map[string]struct {
		path, origin string
		guarded      bool
	}{
		"the form, from its page": {"/connect/slack", "https://legate.example", false},
		"the form, from a site":   {"/connect/slack", "https://evil.example", true},
		"the form, from null":     {"/connect/slack", "null", true},
		"/mcp, same origin":       {"/mcp", "https://legate.example", true},
	} {
		req := httptest.NewRequest("POST", "https://legate.example"+c.path, strings.NewReader("csrf=x"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", c.origin)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if guarded := strings.Contains(rec.Body.String(), "is not allowed (add it to allowed_origins)"); guarded != c.guarded || rec.Code == http.StatusSeeOther {
			t.Errorf("%s: %d %q, guarded %v, want %v", name, rec.Code, rec.Body.String(), guarded, c.guarded)
		}
	}
}
