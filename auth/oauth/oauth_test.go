package oauth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/auth/oauth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

const password = "correct horse battery"

// harness is an authorization server on 127.0.0.1 with one user, bob.
type harness struct {
	t        *testing.T
	srv      *httptest.Server
	as       *oauth.Server
	st       store.Store
	issuer   string
	resource string
	now      time.Time
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := &harness{t: t, st: st, now: time.Now()}
	h.srv = httptest.NewUnstartedServer(nil)
	h.issuer = "http://" + h.srv.Listener.Addr().String()
	h.resource = h.issuer + "/mcp"
	cfg := config.Auth{Resource: h.resource, OAuthServer: &config.OAuthServer{}}
	h.as, err = oauth.New(ctx, cfg, oauth.Options{Store: st, Now: func() time.Time { return h.now }})
	if err != nil {
		t.Fatal(err)
	}
	h.srv.Config.Handler = h.as.Handler()
	h.srv.Start()
	t.Cleanup(h.srv.Close)
	if err := oauth.AddUser(ctx, st.Users(), auth.Principal{Name: "bob", Role: auth.RoleApprover, Tenant: "acme"}, password); err != nil {
		t.Fatal(err)
	}
	return h
}

// register registers a public client with one redirect URI.
func (h *harness) register(redirect string) string {
	h.t.Helper()
	var out struct {
		ClientID string `json:"client_id"`
	}
	status := h.postJSON(oauth.RegisterPath, map[string]any{"client_name": "Test client", "redirect_uris": []string{redirect}, "token_endpoint_auth_method": "none"}, &out)
	if status != http.StatusCreated || out.ClientID == "" {
		h.t.Fatalf("register: %d %+v", status, out)
	}
	return out.ClientID
}

func (h *harness) postJSON(path string, body any, out any) int {
	h.t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(h.issuer+path, "application/json", strings.NewReader(string(b)))
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(out)
	return resp.StatusCode
}

// browser is a user agent: a cookie jar, following no redirect by itself.
func (h *harness) browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func challenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

var hiddenRE = regexp.MustCompile(`name="(id|csrf)" value="([^"]*)"`)

// form reads the hidden fields of a page.
func form(t *testing.T, resp *http.Response) url.Values {
	t.Helper()
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	v := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(string(b), -1) {
		v.Set(m[1], m[2])
	}
	if v.Get("id") == "" || v.Get("csrf") == "" {
		t.Fatalf("no form in the page (%d): %s", resp.StatusCode, b)
	}
	return v
}

// authorize runs the authorization request, login and consent as a
// browser would and returns the redirect the client receives.
func (h *harness) authorize(client, redirect, verifier string, extra url.Values) *url.URL {
	h.t.Helper()
	b, callback, errLoc := h.consented(client, redirect, verifier, extra)
	if errLoc != nil {
		return errLoc
	}
	resp, _ := b.Get(callback)
	resp.Body.Close()
	loc, _ := resp.Location()
	if loc == nil {
		h.t.Fatalf("callback: %d, no redirect", resp.StatusCode)
	}
	return loc
}

// authorizeQuery is the query of an authorization request with PKCE.
func (h *harness) authorizeQuery(client, redirect, verifier string) url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect}, "state": {"st8"},
		"code_challenge": {challenge(verifier)}, "code_challenge_method": {"S256"}, "resource": {h.resource}}
}

// start sends browser b to the authorization endpoint and returns the
// login page's URL it is sent on to.
func (h *harness) start(b *http.Client, q url.Values) string {
	h.t.Helper()
	resp, err := b.Get(h.issuer + oauth.AuthorizePath + "?" + q.Encode())
	if err != nil {
		h.t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := resp.Location()
	if loc == nil || !strings.HasPrefix(loc.String(), h.issuer+oauth.LoginPath) {
		h.t.Fatalf("authorize: %d to %v, want the login page", resp.StatusCode, loc)
	}
	return loc.String()
}

// consented runs the authorization request, login and consent in a new
// browser and returns it with the callback URL consent sent it to; or
// the error redirect of the authorization request.
func (h *harness) consented(client, redirect, verifier string, extra url.Values) (*http.Client, string, *url.URL) {
	h.t.Helper()
	b := h.browser()
	q := h.authorizeQuery(client, redirect, verifier)
	for k, v := range extra {
		q[k] = v
	}
	resp, err := b.Get(h.issuer + oauth.AuthorizePath + "?" + q.Encode())
	if err != nil {
		h.t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := resp.Location()
	if loc == nil || !strings.HasPrefix(loc.String(), h.issuer+oauth.LoginPath) {
		if loc != nil && loc.Query().Get("error") != "" {
			return nil, "", loc
		}
		h.t.Fatalf("authorize: %d to %v, want the login page", resp.StatusCode, loc)
	}
	resp, _ = b.Get(loc.String())
	f := form(h.t, resp)
	f.Set("username", "bob")
	f.Set("password", password)
	resp, _ = b.PostForm(h.issuer+oauth.LoginPath, f)
	f = form(h.t, resp)
	f.Set("decision", "allow")
	resp, _ = b.PostForm(h.issuer+oauth.ConsentPath, f)
	resp.Body.Close()
	loc, _ = resp.Location()
	if resp.StatusCode != http.StatusSeeOther || loc == nil {
		h.t.Fatalf("consent: %d to %v", resp.StatusCode, loc)
	}
	return b, loc.String(), nil
}

type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	Error        string `json:"error"`
}

func (h *harness) token(form url.Values) (int, tokenResponse) {
	h.t.Helper()
	resp, err := http.PostForm(h.issuer+oauth.TokenPath, form)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var tr tokenResponse
	json.NewDecoder(resp.Body).Decode(&tr)
	return resp.StatusCode, tr
}

func (h *harness) exchange(client, redirect, code, verifier string) (int, tokenResponse) {
	return h.token(url.Values{"grant_type": {"authorization_code"}, "client_id": {client}, "redirect_uri": {redirect},
		"code": {code}, "code_verifier": {verifier}, "resource": {h.resource}})
}

func (h *harness) refresh(client, rt string) (int, tokenResponse) {
	return h.token(url.Values{"grant_type": {"refresh_token"}, "client_id": {client}, "refresh_token": {rt}})
}

func refused(err error) bool { return errors.Is(err, sdkauth.ErrInvalidToken) }

const verifier = "a-verifier-of-at-least-forty-three-characters-long-0123456789"

func TestFlow(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	redirect := "http://127.0.0.1:33418/callback"
	client := h.register(redirect)
	loc := h.authorize(client, redirect, verifier, nil)
	code := loc.Query().Get("code")
	if code == "" || loc.Query().Get("state") != "st8" || !strings.HasPrefix(loc.String(), redirect) {
		t.Fatalf("redirect to the client: %v", loc)
	}
	status, tr := h.exchange(client, redirect, code, verifier)
	if status != http.StatusOK || tr.AccessToken == "" || tr.RefreshToken == "" || !strings.EqualFold(tr.TokenType, "bearer") {
		t.Fatalf("exchange: %d %+v", status, tr)
	}
	p, _, scopes, err := h.as.VerifyAccessToken(ctx, tr.AccessToken)
	if err != nil || p.Name != "bob" || p.Role != auth.RoleApprover || p.Tenant != "acme" || len(scopes) == 0 {
		t.Fatalf("verify: %+v %v %v", p, scopes, err)
	}

	t.Run("CodeReplayed", func(t *testing.T) {
		if status, tr := h.exchange(client, redirect, code, verifier); status != http.StatusBadRequest || tr.Error != "invalid_grant" {
			t.Fatalf("a code used twice: %d %+v, want invalid_grant", status, tr)
		}
	})

	// Refresh rotates; the old refresh token used again revokes the grant.
	status, tr2 := h.refresh(client, tr.RefreshToken)
	if status != http.StatusOK || tr2.RefreshToken == "" || tr2.RefreshToken == tr.RefreshToken || tr2.AccessToken == "" {
		t.Fatalf("refresh: %d %+v", status, tr2)
	}
	if _, _, _, err := h.as.VerifyAccessToken(ctx, tr2.AccessToken); err != nil {
		t.Fatalf("the refreshed access token: %v", err)
	}
	t.Run("RefreshReused", func(t *testing.T) {
		if status, tr := h.refresh(client, tr.RefreshToken); status != http.StatusBadRequest || tr.Error != "invalid_grant" {
			t.Fatalf("a rotated refresh token reused: %d %+v, want invalid_grant", status, tr)
		}
		if status, tr := h.refresh(client, tr2.RefreshToken); status != http.StatusBadRequest || tr.Error != "invalid_grant" {
			t.Fatalf("the successor after a reuse: %d %+v, want invalid_grant (the grant is revoked)", status, tr)
		}
		if _, _, _, err := h.as.VerifyAccessToken(ctx, tr2.AccessToken); !refused(err) {
			t.Fatalf("an access token of a revoked grant: %v, want refused", err)
		}
	})

	t.Run("Revoked", func(t *testing.T) {
		loc := h.authorize(client, redirect, verifier, nil)
		_, tr := h.exchange(client, redirect, loc.Query().Get("code"), verifier)
		resp, err := http.PostForm(h.issuer+oauth.RevokePath, url.Values{"client_id": {client}, "token": {tr.RefreshToken}, "token_type_hint": {"refresh_token"}})
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("revoke: %v %v", resp.Status, err)
		}
		resp.Body.Close()
		if _, _, _, err := h.as.VerifyAccessToken(ctx, tr.AccessToken); !refused(err) {
			t.Fatalf("the access token of a revoked refresh token: %v, want refused", err)
		}
		if status, got := h.refresh(client, tr.RefreshToken); status != http.StatusBadRequest || got.Error != "invalid_grant" {
			t.Fatalf("a revoked refresh token: %d %+v", status, got)
		}
	})

	t.Run("Expired", func(t *testing.T) {
		loc := h.authorize(client, redirect, verifier, nil)
		_, tr := h.exchange(client, redirect, loc.Query().Get("code"), verifier)
		h.now = h.now.Add(11 * time.Minute)
		defer func() { h.now = h.now.Add(-11 * time.Minute) }()
		if _, _, _, err := h.as.VerifyAccessToken(ctx, tr.AccessToken); !refused(err) {
			t.Fatalf("an expired access token: %v, want refused", err)
		}
	})

	t.Run("DisabledUser", func(t *testing.T) {
		loc := h.authorize(client, redirect, verifier, nil)
		_, tr := h.exchange(client, redirect, loc.Query().Get("code"), verifier)
		if _, err := oauth.DisableUser(ctx, h.st, "bob"); err != nil {
			t.Fatal(err)
		}
		defer h.st.Users().SetDisabled(ctx, "bob", false)
		if _, _, _, err := h.as.VerifyAccessToken(ctx, tr.AccessToken); !refused(err) {
			t.Fatalf("a disabled user's token: %v, want refused", err)
		}
		if status, got := h.refresh(client, tr.RefreshToken); status != http.StatusBadRequest || got.Error != "invalid_grant" {
			t.Fatalf("a disabled user's refresh: %d %+v", status, got)
		}
	})
}

func TestWrongVerifier(t *testing.T) {
	h := newHarness(t)
	redirect := "http://127.0.0.1:33418/callback"
	client := h.register(redirect)
	loc := h.authorize(client, redirect, verifier, nil)
	status, tr := h.exchange(client, redirect, loc.Query().Get("code"), verifier+"x")
	if status != http.StatusBadRequest || tr.Error != "invalid_grant" {
		t.Fatalf("a wrong PKCE verifier: %d %+v, want invalid_grant", status, tr)
	}
}

func TestPKCERequired(t *testing.T) {
	h := newHarness(t)
	redirect := "http://127.0.0.1:33418/callback"
	client := h.register(redirect)
	for _, method := range []string{"plain", ""} {
		q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect}, "state": {"s"}, "scope": {"mcp"}}
		if method != "" {
			q.Set("code_challenge", verifier)
			q.Set("code_challenge_method", method)
		}
		resp, err := h.browser().Get(h.issuer + oauth.AuthorizePath + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if loc, _ := resp.Location(); loc != nil || resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "PKCE") {
			t.Fatalf("method %q: %d to %v, want 400 naming PKCE, without a redirect", method, resp.StatusCode, loc)
		}
	}
}

func TestRedirectNotRegistered(t *testing.T) {
	h := newHarness(t)
	client := h.register("https://client.example/cb")
	for _, bad := range []string{"https://evil.example/cb", "https://client.example/cb/other"} {
		q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {bad}, "scope": {"mcp"},
			"code_challenge": {challenge(verifier)}, "code_challenge_method": {"S256"}}
		resp, err := h.browser().Get(h.issuer + oauth.AuthorizePath + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if loc, _ := resp.Location(); loc != nil || resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "redirect_uri") {
			t.Fatalf("%s: %d to %v (%s), want 400 without a redirect", bad, resp.StatusCode, loc, body)
		}
	}
}

func TestOtherResource(t *testing.T) {
	h := newHarness(t)
	redirect := "http://127.0.0.1:33418/callback"
	client := h.register(redirect)
	loc := h.authorize(client, redirect, verifier, nil)
	status, tr := h.token(url.Values{"grant_type": {"authorization_code"}, "client_id": {client}, "redirect_uri": {redirect},
		"code": {loc.Query().Get("code")}, "code_verifier": {verifier}, "resource": {"https://other.example/mcp"}})
	if status != http.StatusBadRequest || tr.Error != "invalid_target" {
		t.Fatalf("a token for another resource: %d %+v, want invalid_target", status, tr)
	}
	q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect}, "resource": {"https://other.example/mcp"},
		"code_challenge": {challenge(verifier)}, "code_challenge_method": {"S256"}}
	resp, _ := h.browser().Get(h.issuer + oauth.AuthorizePath + "?" + q.Encode())
	var e struct{ Error string }
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || e.Error != "invalid_target" {
		t.Fatalf("authorizing for another resource: %d %+v, want invalid_target", resp.StatusCode, e)
	}
}

// TestLoginLeaksNoAccount: an unknown user, a disabled one and a wrong
// password get the same page.
func TestLoginLeaksNoAccount(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if err := oauth.AddUser(ctx, h.st.Users(), auth.Principal{Name: "carol"}, password); err != nil {
		t.Fatal(err)
	}
	if _, err := oauth.DisableUser(ctx, h.st, "carol"); err != nil {
		t.Fatal(err)
	}
	redirect := "http://127.0.0.1:33418/callback"
	client := h.register(redirect)
	var pages []string
	for _, c := range [][2]string{{"nobody", password}, {"carol", password}, {"bob", "wrong password!!"}} {
		b := h.browser()
		q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect},
			"code_challenge": {challenge(verifier)}, "code_challenge_method": {"S256"}}
		resp, _ := b.Get(h.issuer + oauth.AuthorizePath + "?" + q.Encode())
		resp.Body.Close()
		loc, _ := resp.Location()
		resp, _ = b.Get(loc.String())
		f := form(t, resp)
		f.Set("username", c[0])
		f.Set("password", c[1])
		resp, _ = b.PostForm(h.issuer+oauth.LoginPath, f)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "Wrong user name or password.") {
			t.Fatalf("%s: %d %s", c[0], resp.StatusCode, body)
		}
		pages = append(pages, hiddenRE.ReplaceAllString(string(body), ""))
	}
	if pages[0] != pages[1] || pages[1] != pages[2] {
		t.Fatalf("the refusals differ:\n%s\n%s\n%s", pages[0], pages[1], pages[2])
	}
}

// TestConsentNeedsTheSameBrowser: the pages and forms of a request are
// refused to another browser, and a form posted without the cookie.
func TestConsentNeedsTheSameBrowser(t *testing.T) {
	h := newHarness(t)
	redirect := "http://127.0.0.1:33418/callback"
	client := h.register(redirect)
	b := h.browser()
	login := h.start(b, h.authorizeQuery(client, redirect, verifier))
	resp, _ := b.Get(login)
	f := form(t, resp)
	f.Set("username", "bob")
	f.Set("password", password)
	resp, _ = b.PostForm(h.issuer+oauth.LoginPath, f)
	f = form(t, resp)
	f.Set("decision", "allow")
	// Another browser, its own cookie, the victim's id and form token.
	other := h.browser()
	h.start(other, h.authorizeQuery(client, redirect, verifier))
	resp, _ = other.Get(login)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("the login page in another browser: %d, want 403", resp.StatusCode)
	}
	resp, _ = other.PostForm(h.issuer+oauth.ConsentPath, f)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("consent from another browser: %d, want 403", resp.StatusCode)
	}
	// No cookie at all.
	resp, _ = http.PostForm(h.issuer+oauth.ConsentPath, f)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("consent without the cookie: %d, want 403", resp.StatusCode)
	}
}

func TestRegistrationLimits(t *testing.T) {
	h := newHarness(t)
	var out map[string]any
	for _, body := range []map[string]any{
		{"redirect_uris": []string{}},
		{"redirect_uris": []string{"http://evil.example/cb"}},
		{"redirect_uris": []string{"javascript:alert(1)"}},
		{"redirect_uris": []string{"http://127.evil.com/cb"}},
		{"redirect_uris": []string{"http://127.0.0.1.evil.com/cb"}},
		{"redirect_uris": []string{"http://localhost.evil.com/cb"}},
		{"redirect_uris": []string{"ms-msdt:/id PCWDiagnostic"}},
		{"redirect_uris": []string{"search-ms:query=x"}},
		{"redirect_uris": []string{"jar:https://x.example/a.jar!/"}},
		{"redirect_uris": []string{"view-source:https://x.example/"}},
		{"redirect_uris": []string{"myapp:/cb"}},
		{"redirect_uris": []string{"https://user:pw@x.example/cb"}},
		{"redirect_uris": []string{"com.example.app:/cb#f"}},
		{"redirect_uris": []string{"https://x.example/cb#frag"}},
		{"redirect_uris": []string{"https://x.example/cb"}, "grant_types": []string{"client_credentials"}},
	} {
		if status := h.postJSON(oauth.RegisterPath, body, &out); status != http.StatusBadRequest {
			t.Fatalf("%v: %d %v, want 400", body, status, out)
		}
	}
	var reg map[string]any
	if status := h.postJSON(oauth.RegisterPath, map[string]any{"redirect_uris": []string{"cursor://anysphere.cursor-mcp/oauth/callback"}, "token_endpoint_auth_method": "client_secret_basic"}, &reg); status != http.StatusCreated || reg["client_secret"] == nil {
		t.Fatalf("a confidential client with a private-use scheme: %d %v", status, reg)
	}
	// A client that never obtains a token is deleted after unused_client_ttl.
	h.now = h.now.Add(25 * time.Hour)
	h.register("https://y.example/cb")
	if _, err := h.st.OAuth().Client(context.Background(), reg["client_id"].(string)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an unused client after a day: %v, want deleted", err)
	}
}

func TestMetadata(t *testing.T) {
	h := newHarness(t)
	for _, p := range []string{oauth.MetadataPath, oauth.OIDCMetadataPath} {
		resp, err := http.Get(h.issuer + p)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if m["issuer"] != h.issuer || m["registration_endpoint"] != h.issuer+oauth.RegisterPath || m["token_endpoint"] != h.issuer+oauth.TokenPath {
			t.Fatalf("%s: %v", p, m)
		}
		if cm, _ := m["code_challenge_methods_supported"].([]any); len(cm) != 1 || cm[0] != "S256" {
			t.Fatalf("%s: code challenge methods %v, want S256 only", p, cm)
		}
	}
}

func TestPassword(t *testing.T) {
	h := oauth.HashPassword("s3cret password")
	if !oauth.CheckPassword(h, "s3cret password") || oauth.CheckPassword(h, "s3cret passwore") || !strings.HasPrefix(h, "$argon2id$v=19$") {
		t.Fatalf("hash %s", h)
	}
	if err := oauth.AddUser(context.Background(), nil, auth.Principal{Name: "x"}, "short"); err == nil {
		t.Fatal("a short password was accepted")
	}
}

func nopLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// browserFrom is a browser whose connections come from the loopback
// address ip (127.0.0.2…), a source of its own.
func (h *harness) browserFrom(ip string) *http.Client {
	b := h.browser()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	b.Transport = &http.Transport{DialContext: d.DialContext}
	return b
}

// loginAs posts a login for a fresh authorization request in browser b
// and returns the status: 200 (the consent page), 401 or 429.
func (h *harness) loginAs(b *http.Client, client, redirect, name, pw string) int {
	h.t.Helper()
	resp, _ := b.Get(h.start(b, h.authorizeQuery(client, redirect, verifier)))
	f := form(h.t, resp)
	f.Set("username", name)
	f.Set("password", pw)
	resp, _ = b.PostForm(h.issuer+oauth.LoginPath, f)
	resp.Body.Close()
	if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
		h.t.Fatal("429 without Retry-After")
	}
	return resp.StatusCode
}

// TestLoginSlowsDownWithoutLockout: failed logins of a name from an
// address make that address wait longer before the next check of it, but
// never lock the account: its owner logs in from another address at
// once, and from the same one after the wait.
func TestLoginSlowsDownWithoutLockout(t *testing.T) {
	h := newHarness(t)
	redirect := "http://127.0.0.1:33418/callback"
	client := h.register(redirect)
	attacker, owner := h.browser(), h.browserFrom("127.0.0.2")
	for i := range 6 {
		if got := h.loginAs(attacker, client, redirect, "bob", "a wrong password"); got != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d, want 401", i+1, got)
		}
		h.now = h.now.Add(time.Minute) // past each wait, and the address's bucket
	}
	if got := h.loginAs(attacker, client, redirect, "bob", "a wrong password"); got != http.StatusUnauthorized {
		t.Fatalf("after waiting: %d, want 401", got)
	}
	if got := h.loginAs(attacker, client, redirect, "bob", "another wrong password"); got != http.StatusTooManyRequests {
		t.Fatalf("at once after a seventh failure: %d, want 429", got)
	}
	if got := h.loginAs(owner, client, redirect, "bob", password); got != http.StatusOK {
		t.Fatalf("the owner from another address: %d, want 200", got)
	}
	h.now = h.now.Add(time.Minute)
	if got := h.loginAs(attacker, client, redirect, "bob", password); got != http.StatusOK {
		t.Fatalf("the right password from the first address after the wait: %d, want 200", got)
	}
}

// TestLoginSprayIsLimitedPerSource: one address trying many names is
// held back after the burst its bucket allows; another address is not.
func TestLoginSprayIsLimitedPerSource(t *testing.T) {
	h := newHarness(t)
	redirect := "http://127.0.0.1:33418/callback"
	client := h.register(redirect)
	b := h.browser()
	limited := 0
	for i := range 20 {
		if h.loginAs(b, client, redirect, fmt.Sprintf("user%d", i), "a wrong password") == http.StatusTooManyRequests {
			limited++
		}
	}
	if limited < 5 {
		t.Fatalf("20 names tried at once from one address: %d refused with 429, want the burst's excess", limited)
	}
	if got := h.loginAs(h.browserFrom("127.0.0.3"), client, redirect, "bob", password); got != http.StatusOK {
		t.Fatalf("another address: %d, want 200", got)
	}
}

// TestFormsCheckEveryOrigin: a login form posted with the issuer's Origin
// and a second, foreign one is refused as posted from another site, as one
// with the foreign Origin alone is.
func TestFormsCheckEveryOrigin(t *testing.T) {
	h := newHarness(t)
	redirect := "http://127.0.0.1:33418/callback"
	client := h.register(redirect)
	for name, tc := range map[string]struct {
		origins []string
		status  int
	}{
		"the issuer's":                 {[]string{h.issuer}, http.StatusOK},
		"another site's":               {[]string{"https://evil.example"}, http.StatusForbidden},
		"the issuer's, then another's": {[]string{h.issuer, "https://evil.example"}, http.StatusForbidden},
	} {
		t.Run(name, func(t *testing.T) {
			b := h.browser()
			q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect},
				"code_challenge": {challenge(verifier)}, "code_challenge_method": {"S256"}}
			resp, err := b.Get(h.issuer + oauth.AuthorizePath + "?" + q.Encode())
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			loc, _ := resp.Location()
			resp, _ = b.Get(loc.String())
			f := form(t, resp)
			f.Set("username", "bob")
			f.Set("password", password)
			req, _ := http.NewRequest("POST", h.issuer+oauth.LoginPath, strings.NewReader(f.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header["Origin"] = tc.origins
			resp, err = b.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || (tc.status == http.StatusForbidden) != strings.Contains(string(body), "another site") {
				t.Fatalf("login posted with Origin %q: %d %s, want %d", tc.origins, resp.StatusCode, body, tc.status)
			}
		})
	}
}
