package oauth_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/legate-mcp/legate/auth/oauth"
)

// TestLoginLinkFromAnotherBrowserGetsNoCode: someone starts an
// authorization with his own PKCE pair for a public client that calls
// itself "Visual Studio Code" and sends the login link to a victim; the
// victim's browser is refused the login page, so no code reaches the
// client's redirect, whatever the victim does.
func TestLoginLinkFromAnotherBrowserGetsNoCode(t *testing.T) {
	h := newHarness(t)
	redirect := "https://attacker.example/cb"
	var reg struct {
		ClientID string `json:"client_id"`
	}
	h.postJSON(oauth.RegisterPath, map[string]any{"client_name": "Visual Studio Code", "redirect_uris": []string{redirect}, "token_endpoint_auth_method": "none"}, &reg)
	attacker := h.browser()
	login := h.start(attacker, h.authorizeQuery(reg.ClientID, redirect, verifier))

	victim := h.browser()
	resp, err := victim.Get(login)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		// The victim logs in and consents; the code must still not come.
		f := form(t, &http.Response{StatusCode: resp.StatusCode, Body: io.NopCloser(strings.NewReader(string(body)))})
		f.Set("username", "bob")
		f.Set("password", password)
		resp, _ = victim.PostForm(h.issuer+oauth.LoginPath, f)
		f = form(t, resp)
		f.Set("decision", "allow")
		resp, _ = victim.PostForm(h.issuer+oauth.ConsentPath, f)
		resp.Body.Close()
		if loc, _ := resp.Location(); loc != nil {
			resp, _ = victim.Get(loc.String())
			resp.Body.Close()
			if loc, _ := resp.Location(); loc != nil && loc.Query().Get("code") != "" {
				t.Fatalf("the victim's consent through another browser's login link sent a code to %s", loc)
			}
		}
		t.Fatalf("the login page of another browser's request: 200, want 403")
	}
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "another browser") {
		t.Fatalf("the login page of another browser's request: %d %s, want 403", resp.StatusCode, body)
	}
	// The attacker's own browser cannot take the code either: nobody
	// logged in and consented in it.
	id, _ := url.Parse(login)
	resp, _ = attacker.Get(h.issuer + oauth.CallbackPath + "?id=" + id.Query().Get("id"))
	resp.Body.Close()
	if loc, _ := resp.Location(); loc != nil && loc.Query().Get("code") != "" {
		t.Fatalf("a code without a login: %s", loc)
	}
}

// TestCallbackIssuesOneCode: the callback gives a consented request its
// code once; a second visit, or racing visits, get no second code.
func TestCallbackIssuesOneCode(t *testing.T) {
	h := newHarness(t)
	redirect := "http://127.0.0.1:33418/callback"
	client := h.register(redirect)

	b, callback, _ := h.consented(client, redirect, verifier, nil)
	code := func() (int, string) {
		resp, err := b.Get(callback)
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		resp.Body.Close()
		if loc, _ := resp.Location(); loc != nil {
			return resp.StatusCode, loc.Query().Get("code")
		}
		return resp.StatusCode, ""
	}
	if status, c := code(); c == "" {
		t.Fatalf("the first callback: %d, no code", status)
	}
	if status, c := code(); c != "" || status != http.StatusBadRequest {
		t.Fatalf("the callback again: %d, code %q; want 400 and none", status, c)
	}

	// Racing visits of a fresh request: one code.
	b, callback, _ = h.consented(client, redirect, verifier, nil)
	var mu sync.Mutex
	var codes []string
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, c := code(); c != "" {
				mu.Lock()
				codes = append(codes, c)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(codes) != 1 {
		t.Fatalf("racing callbacks issued %d codes, want 1", len(codes))
	}
	if status, tr := h.exchange(client, redirect, codes[0], verifier); status != http.StatusOK {
		t.Fatalf("exchanging the one code: %d %+v", status, tr)
	}
	if status, c := code(); c != "" || status == http.StatusFound {
		t.Fatalf("the callback after the exchange: %d, code %q", status, c)
	}
}

// TestFormTokenIsKeyedToTheCookie: a browser whose cookie someone else
// chose (and so knows) still cannot post a form with that value as its
// token: the token is a keyed hash of the cookie, not the cookie.
func TestFormTokenIsKeyedToTheCookie(t *testing.T) {
	h := newHarness(t)
	redirect := "http://127.0.0.1:33418/callback"
	client := h.register(redirect)
	b := h.browser()
	planted := strings.Repeat("A", 43)
	u, _ := url.Parse(h.issuer + "/oauth/")
	b.Jar.SetCookies(u, []*http.Cookie{{Name: "legate_oauth", Value: planted, Path: "/oauth/"}, {Name: "legate_oauth_csrf", Value: planted, Path: "/oauth/"}})
	login := h.start(b, h.authorizeQuery(client, redirect, verifier))
	resp, _ := b.Get(login)
	f := form(t, resp)
	if f.Get("csrf") == planted {
		t.Fatal("the form token is the cookie's value")
	}
	f.Set("csrf", planted)
	f.Set("username", "bob")
	f.Set("password", password)
	resp, _ = b.PostForm(h.issuer+oauth.LoginPath, f)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a login posted with the cookie's value as its token: %d, want 403", resp.StatusCode)
	}
}

// TestBrowserCookie: the cookie /oauth/authorize sets is HttpOnly and
// SameSite=Lax (the browser arrives by another site's top-level
// navigation, where a Strict cookie is not sent).
func TestBrowserCookie(t *testing.T) {
	h := newHarness(t)
	redirect := "http://127.0.0.1:33418/callback"
	client := h.register(redirect)
	q := h.authorizeQuery(client, redirect, verifier)
	resp, err := h.browser().Get(h.issuer + oauth.AuthorizePath + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cs := resp.Cookies()
	if len(cs) != 1 || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteLaxMode || len(cs[0].Value) < 43 {
		t.Fatalf("the cookies set by /oauth/authorize: %+v", cs)
	}
}

// TestConsentNamesTheRedirectHost: the consent page says plainly where
// approving sends the browser, whatever the client calls itself.
func TestConsentNamesTheRedirectHost(t *testing.T) {
	h := newHarness(t)
	redirect := "https://attacker.example/cb?x=1"
	client := h.register(redirect)
	b := h.browser()
	resp, _ := b.Get(h.start(b, h.authorizeQuery(client, redirect, verifier)))
	f := form(t, resp)
	f.Set("username", "bob")
	f.Set("password", password)
	resp, _ = b.PostForm(h.issuer+oauth.LoginPath, f)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := "After you approve, you will be sent to <strong>attacker.example</strong>"; !strings.Contains(string(body), want) {
		t.Fatalf("the consent page does not say %q:\n%s", want, body)
	}
}

// The login and consent pages are sent with Referrer-Policy same-origin:
// under no-referrer a browser posts their own forms with Origin: null,
// which the forms refuse as another site's, so no one could sign in.
func TestFormPagesLetTheBrowserNameTheirOrigin(t *testing.T) {
	h := newHarness(t)
	redirect := "https://client.example/cb"
	client := h.register(redirect)
	b := h.browser()
	resp, err := b.Get(h.start(b, h.authorizeQuery(client, redirect, verifier)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if rp := resp.Header.Get("Referrer-Policy"); rp != "same-origin" {
		t.Errorf("the login page has Referrer-Policy %q; want same-origin", rp)
	}
}
