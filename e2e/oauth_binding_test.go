package e2e_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestOAuthAuthorizationIsBoundToTheBrowser, against legate serve: a man
// starts an authorization with his own PKCE pair for a public client
// calling itself "Visual Studio Code" and sends the login link to a
// victim; the victim's browser (its own cookie jar) signs in and
// consents through that link, and no code reaches the client's redirect.
// The victim's own flow works, and its callback visited again gets no
// second code.
func TestOAuthAuthorizationIsBoundToTheBrowser(t *testing.T) {
	if legateBin == "" { // -short, or no peers: the binary was not built
		need(t)
	}
	s, _, _ := oauthLegate(t)
	base := "http://" + s.addr
	redirect := "http://127.0.0.1:1/cb"
	resp, err := http.Post(base+"/oauth/register", "application/json",
		strings.NewReader(`{"client_name":"Visual Studio Code","redirect_uris":["`+redirect+`"],"token_endpoint_auth_method":"none"}`))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		ClientID string `json:"client_id"`
	}
	json.NewDecoder(resp.Body).Decode(&reg)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("register: %d", resp.StatusCode)
	}
	authorizeURL := func(verifier string) string {
		sum := sha256.Sum256([]byte(verifier))
		return base + "/oauth/authorize?" + url.Values{"response_type": {"code"}, "client_id": {reg.ClientID}, "redirect_uri": {redirect}, "state": {"s"},
			"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "resource": {s.url("127.0.0.1")}}.Encode()
	}
	// browser is a user agent with its own cookies that stops at the
	// callback and at the client's redirect, recording both.
	type browser struct {
		*http.Client
		callback, code string
	}
	newBrowser := func() *browser {
		jar, _ := cookiejar.New(nil)
		b := &browser{}
		b.Client = &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			if c := req.URL.Query().Get("code"); c != "" {
				b.code = c
				return http.ErrUseLastResponse
			}
			if req.URL.Path == "/oauth/authorize/callback" && b.callback == "" {
				b.callback = req.URL.String()
				return http.ErrUseLastResponse
			}
			return nil
		}}
		return b
	}

	// The attacker starts the authorization and keeps the login link.
	attacker := newBrowser()
	attacker.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err = attacker.Get(authorizeURL(strings.Repeat("a", 50)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loginURL := resp.Header.Get("Location")
	if !strings.Contains(loginURL, "/oauth/login?id=") {
		t.Fatalf("authorize: %d to %q, want the login page", resp.StatusCode, loginURL)
	}

	// The victim follows it, signs in and consents as far as Legate lets.
	victim := newBrowser()
	err = userAgent(victim.Client, loginURL, "alice", oauthPassword)
	if victim.code != "" || victim.callback != "" {
		t.Fatalf("the victim's browser, through the attacker's login link, reached the callback %q / a code %q", victim.callback, victim.code)
	}
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("the attacker's login link in the victim's browser: %v, want 403", err)
	}

	// The victim's own flow works, once.
	own := newBrowser()
	userAgent(own.Client, authorizeURL(strings.Repeat("v", 50)), "alice", oauthPassword)
	if own.callback == "" {
		t.Fatal("the victim's own flow did not reach the callback")
	}
	visit := func() (int, string) {
		own.code = ""
		resp, err := own.Get(own.callback)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, own.code
	}
	if status, code := visit(); code == "" {
		t.Fatalf("the callback: %d, no code", status)
	}
	if status, code := visit(); code != "" || status != http.StatusBadRequest {
		t.Fatalf("the callback replayed: %d, code %q; want 400 and no code", status, code)
	}
	// And the callback in the attacker's browser gives nothing.
	resp, err = attacker.Get(own.callback)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); strings.Contains(loc, "code=") {
		t.Fatalf("the victim's callback in another browser: %d to %s", resp.StatusCode, loc)
	}
}
