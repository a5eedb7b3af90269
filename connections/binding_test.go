package connections_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connections"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/vault"
)

// The attack: mallory starts a consent in her browser and sends the
// provider's consent URL to alice, who is signed in at the provider;
// alice's browser approves and lands on Legate's callback. The consent
// is bound to mallory's browser, so the callback in alice's is refused
// and nothing is stored for mallory; in mallory's own browser the
// consent completes.
func TestConsentCompletesOnlyInTheBrowserThatStartedIt(t *testing.T) {
	e := newEnv(t)
	mallory, alice := oauthtest.NewBrowser("mallory-account"), oauthtest.NewBrowser("alice-account")
	consent, err := mallory.Start(e.link(t, "mallory"))
	if err != nil {
		t.Fatal(err)
	}
	status, body, at, err := alice.Follow(consent)
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusBadRequest || !strings.Contains(body, "started in another browser") || strings.Contains(body, "is connected") || at.Path != connections.CallbackPath {
		t.Fatalf("the callback in alice's browser of mallory's consent: %d at %s: %s", status, at, body)
	}
	if _, ok, _ := e.m.Get(context.Background(), "acme", "mallory", "slack"); ok {
		t.Fatal("alice's account was connected for mallory")
	}
	if len(e.provider.Issued()) != 0 {
		t.Fatal("the code alice's browser brought back was exchanged")
	}

	// In mallory's own browser, her consent completes, as her account,
	// and the page says plainly for whom.
	status, body, _, err = mallory.Follow(consent)
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusOK || !strings.Contains(body, "slack is connected for mallory (tenant acme)") {
		t.Fatalf("mallory's own consent: %d: %s", status, body)
	}
	tok, err := e.get("mallory")
	if who, _ := e.provider.User(tok); err != nil || who != "mallory-account" {
		t.Fatalf("mallory's connection is %q's (%v)", who, err)
	}
}

// A state is accepted once: the callback clears the browser's binding
// cookie, and even a browser that kept it (or put it back) is refused
// the same state with a new code, by the replica that accepted it and
// by another sharing its store. Without a store, the manager itself
// refuses it.
func TestConsentStateIsAcceptedOnce(t *testing.T) {
	for name, shared := range map[string]bool{"two replicas sharing a store": true, "one process without a store": false} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			other := e.srv // the replica the replay reaches
			if shared {
				st, err := sqlite.OpenMemory(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				key := make([]byte, 32)
				opts := connections.Options{Vault: e.vault, Instances: func() []sources.InstanceDef { return []sources.InstanceDef{e.def} },
					Key: func(context.Context) []byte { return key }, Claims: st.Operations()}
				e.m = connections.New(opts)
				e.srv = httptest.NewServer(e.m.Handler(nil))
				t.Cleanup(e.srv.Close)
				other = httptest.NewServer(connections.New(opts).Handler(nil))
				t.Cleanup(other.Close)
			}
			b := oauthtest.NewBrowser("alice-account")
			consent, err := b.Start(e.link(t, "alice"))
			if err != nil {
				t.Fatal(err)
			}
			cookie := bindingCookie(t, b, e.srv.URL)
			if status, body, _, err := b.Follow(consent); err != nil || status != http.StatusOK {
				t.Fatalf("the consent: %d %v: %s", status, err, body)
			}
			if c := bindingCookie(t, b, e.srv.URL); c != nil {
				t.Errorf("the callback left the binding cookie %s", c.Name)
			}
			// The same consent URL again: the provider approves anew with the
			// same PKCE challenge, and sends back the same state with a
			// fresh code, to the other replica.
			b.Client.Jar.SetCookies(mustParse(t, e.srv.URL+"/connect/"), []*http.Cookie{cookie})
			replay := strings.Replace(consent, url.QueryEscape(e.srv.URL), url.QueryEscape(other.URL), 1)
			before := len(e.provider.Issued())
			status, body, _, err := b.Follow(replay)
			if err != nil {
				t.Fatal(err)
			}
			if status != http.StatusBadRequest || !strings.Contains(body, "used already") || len(e.provider.Issued()) != before {
				t.Fatalf("a replayed state: %d: %s", status, body)
			}
		})
	}
}

// bindingCookie is b's binding cookie for the consent flow at base, nil
// when it has none.
func bindingCookie(t *testing.T, b *oauthtest.Browser, base string) *http.Cookie {
	t.Helper()
	for _, c := range b.Client.Jar.Cookies(mustParse(t, base+connections.CallbackPath)) {
		if strings.HasPrefix(c.Name, "legate_connect_") && c.Name != "legate_connect_form" {
			return c
		}
	}
	return nil
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// A link opens Legate's page, which names who is being connected to
// what and starts nothing; its form starts the consent only when posted
// from the page itself with the page's CSRF token: not from another
// site, not from an opaque ("null") origin, not without the token. A
// ticket tampered with, or for another instance, opens no page.
func TestLinkPageSaysWhoAndStartsOnlyFromItsForm(t *testing.T) {
	e := newEnv(t)
	link := e.link(t, "mallory")
	b := oauthtest.NewBrowser("alice-account")
	res, err := b.Client.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`<span id="principal">mallory</span>`, `(tenant <span id="tenant">acme</span>)`, "your account at slack", "Go on only if you are mallory"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the link's page lacks %q:\n%s", want, page)
		}
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("the link's page may be framed: %q", csp)
	}
	// Under no-referrer a browser posts the page's own form with Origin:
	// null, which the form refuses: no one could go on.
	if rp := res.Header.Get("Referrer-Policy"); rp != "same-origin" {
		t.Errorf("the link's page has Referrer-Policy %q; want same-origin", rp)
	}
	if len(e.provider.Issued()) != 0 || bindingCookie(t, b, e.srv.URL) != nil {
		t.Fatal("opening the link started a consent")
	}
	ticket := mustParse(t, link).Query().Get("ticket")
	var csrf string
	for _, c := range b.Client.Jar.Cookies(mustParse(t, link)) {
		if c.Name == "legate_connect_form" {
			csrf = c.Value
		}
	}
	post := func(origin string, form url.Values) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", e.srv.URL+"/connect/slack", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		c := *b.Client
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	for name, c := range map[string]struct {
		origin string
		form   url.Values
	}{
		"another site":      {"https://evil.example", url.Values{"ticket": {ticket}, "csrf": {csrf}}},
		"an opaque origin":  {"null", url.Values{"ticket": {ticket}, "csrf": {csrf}}},
		"no CSRF token":     {"", url.Values{"ticket": {ticket}}},
		"a wrong token":     {e.srv.URL, url.Values{"ticket": {ticket}, "csrf": {"x" + csrf}}},
		"a tampered ticket": {e.srv.URL, url.Values{"ticket": {ticket[:len(ticket)-2] + "AA"}, "csrf": {csrf}}},
	} {
		if res := post(c.origin, c.form); res.StatusCode == http.StatusSeeOther || bindingCookie(t, b, e.srv.URL) != nil {
			t.Errorf("the form posted with %s: %d, want refused", name, res.StatusCode)
		}
	}
	res = post(e.srv.URL, url.Values{"ticket": {ticket}, "csrf": {csrf}})
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "/oauth/authorize?") || bindingCookie(t, b, e.srv.URL) == nil {
		t.Fatalf("the page's own form: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	// A ticket for another instance opens no page of this one.
	other := strings.Replace(link, "/connect/slack?", "/connect/notslack?", 1)
	if res, err := http.Get(other); err != nil || res.StatusCode != http.StatusBadRequest {
		t.Fatalf("a ticket on another instance's page: %v %v", res.StatusCode, err)
	}
}

// The page a consent's callback shows a person names no secret the
// gateway holds, even when the provider echoes one in its error.
func TestCallbackPageMasksSecrets(t *testing.T) {
	e := newEnv(t)
	const secret = "app-client-secret-c4n4ry"
	masks := vault.NewMasks()
	masks.Pin("config", secret)
	key := make([]byte, 32)
	e.m = connections.New(connections.Options{Vault: e.vault, Instances: func() []sources.InstanceDef { return []sources.InstanceDef{e.def} },
		Key: func(context.Context) []byte { return key }, Masks: masks})
	e.srv = httptest.NewServer(e.m.Handler(nil))
	t.Cleanup(e.srv.Close)
	b := oauthtest.NewBrowser("mallory-account")
	consent, err := b.Start(e.link(t, "mallory"))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(consent)
	back := e.srv.URL + connections.CallbackPath + "?" + url.Values{"state": {u.Query().Get("state")}, "error": {"invalid_client"},
		"error_description": {"client_secret " + secret + " is wrong"}}.Encode()
	status, body, _, err := b.Follow(back)
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusBadRequest || strings.Contains(body, secret) || !strings.Contains(body, "[redacted]") {
		t.Fatalf("the callback's page: %d: %s", status, body)
	}
}
