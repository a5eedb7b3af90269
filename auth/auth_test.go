package auth_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/auth/authtest"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

func tokenStore(t *testing.T) store.TokenStore {
	t.Helper()
	st, err := sqlite.OpenMemory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st.Tokens()
}

// newAuth builds an authenticator from a config document.
func newAuth(t *testing.T, doc string, tokens store.TokenStore) *auth.Authenticator {
	t.Helper()
	f, err := config.Parse([]byte(doc), nil)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	a, err := auth.NewAuthenticator(f.Auth, tokens, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// whoami answers with the request's principal as JSON; it also checks
// that the writer it got can stream.
var whoami = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if _, ok := w.(http.Flusher); !ok {
		http.Error(w, "writer cannot flush", http.StatusInternalServerError)
		return
	}
	json.NewEncoder(w).Encode(auth.PrincipalFromContext(r.Context()))
})

// call sends a request with the bearer token (none if "") through h.
func call(h http.Handler, token string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{}"))
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func principalOf(t *testing.T, w *httptest.ResponseRecorder) auth.Principal {
	t.Helper()
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var p auth.Principal
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
	return p
}

func TestStaticTokens(t *testing.T) {
	ctx := context.Background()
	ts := tokenStore(t)
	a := newAuth(t, "auth:\n  resource: "+resource+"\n", ts)
	if !a.Enabled() || a.MetadataURL() != metadataURL {
		t.Fatalf("enabled %v, metadata URL %q", a.Enabled(), a.MetadataURL())
	}
	alice, err := auth.CreateToken(ctx, ts, auth.Principal{Name: "alice", Tenant: "acme", Profile: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(alice, auth.TokenPrefix) || len(alice) != len(auth.TokenPrefix)+43 {
		t.Fatalf("token %q: want the prefix and 32 bytes in base64url", alice)
	}
	if _, err := auth.CreateToken(ctx, ts, auth.Principal{Name: "alice"}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate name: %v", err)
	}
	for _, bad := range []auth.Principal{{Name: "has space"}, {Name: "x", Role: "root"}, {Name: "x", Tenant: "a\nb"}} {
		if _, err := auth.CreateToken(ctx, ts, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}

	ti, err := a.Verify(ctx, alice, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := auth.PrincipalFrom(ti)
	if ti.UserID == "" || time.Until(ti.Expiration) < time.Hour || p == nil ||
		*p != (auth.Principal{Name: "alice", Role: auth.RoleUser, Tenant: "acme", Profile: "dev"}) {
		t.Fatalf("token info %+v, principal %+v", ti, p)
	}

	h := a.Middleware()(whoami)
	if got := principalOf(t, call(h, alice)); got.Name != "alice" || got.Tenant != "acme" || got.Role != auth.RoleUser {
		t.Fatalf("principal %+v", got)
	}
	wrong := auth.TokenPrefix + strings.Repeat("A", 43)
	for name, token := range map[string]string{"wrong": wrong, "none": "", "not a token": "hello", "altered": alice[:len(alice)-1] + "x"} {
		w := call(h, token)
		want := challenge + `, error="invalid_token"`
		if token == "" {
			want = challenge // no token, no error (RFC 6750 §3.1)
		}
		if w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") != want {
			t.Errorf("%s: status %d, WWW-Authenticate %q", name, w.Code, w.Header().Get("WWW-Authenticate"))
		}
		if token != "" && strings.Contains(w.Body.String(), token) {
			t.Errorf("%s: the answer holds the token: %s", name, w.Body)
		}
	}

	if err := ts.Revoke(ctx, "alice", time.Now()); err != nil {
		t.Fatal(err)
	}
	if w := call(h, alice); w.Code != http.StatusUnauthorized || strings.Contains(w.Body.String(), alice) {
		t.Fatalf("revoked: status %d: %s", w.Code, w.Body)
	}
	if _, err := a.Verify(ctx, alice, nil); !errors.Is(err, sdkauth.ErrInvalidToken) {
		t.Fatalf("revoked: %v", err)
	}
}

func TestStaticTokensWithoutResource(t *testing.T) {
	ts := tokenStore(t)
	a := newAuth(t, "auth:\n  tokens: true\n", ts)
	tok, err := auth.CreateToken(context.Background(), ts, auth.Principal{Name: "ci", Role: auth.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	h := a.Middleware()(whoami)
	if got := principalOf(t, call(h, tok)); got.Role != auth.RoleAdmin {
		t.Fatalf("principal %+v", got)
	}
	if w := call(h, "lgt_nope"); w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") != `Bearer realm="legate", `+invalid+`, `+described {
		t.Fatalf("status %d, WWW-Authenticate %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	w := httptest.NewRecorder()
	a.MetadataHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, auth.MetadataPath, nil))
	if w.Code != http.StatusNotFound {
		t.Fatalf("metadata without a resource: %d", w.Code)
	}
}

func TestAccessTokens(t *testing.T) {
	d := authtest.NewIDP(t)
	a := newAuth(t, d.Config(""), tokenStore(t))
	h := a.Middleware()(whoami)

	good := d.Sign(d.Claims("alice"), d.Key)
	got := principalOf(t, call(h, good))
	if got != (auth.Principal{Name: "alice", Role: auth.RoleApprover, Tenant: "acme", Profile: "p1"}) {
		t.Fatalf("principal %+v", got)
	}
	ti, err := a.Verify(context.Background(), good, nil)
	if err != nil || ti.UserID == "" || time.Until(ti.Expiration) < 50*time.Minute || strings.Join(ti.Scopes, " ") != "mcp:tools read" {
		t.Fatalf("token info %+v, %v", ti, err)
	}

	with := func(change func(map[string]any)) string {
		c := d.Claims("alice")
		change(c)
		return d.Sign(c, d.Key)
	}
	other := d.NewKey("k1") // same key id, not the issuer's key
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"k1"}`))
	payload, _ := json.Marshal(map[string]any{"iss": d.Issuer, "aud": resource, "sub": "mallory", "exp": time.Now().Add(time.Hour).Unix()})
	unsigned := header + "." + base64.RawURLEncoding.EncodeToString(payload) + "."

	refused := map[string]struct{ token, reason string }{
		"wrong audience":  {with(func(c map[string]any) { c["aud"] = []string{"https://other.example.com/mcp"} }), "not issued for this resource"},
		"no audience":     {with(func(c map[string]any) { delete(c, "aud") }), "not issued for this resource"},
		"wrong issuer":    {with(func(c map[string]any) { c["iss"] = "https://evil.example.com/" }), "another issuer"},
		"expired":         {with(func(c map[string]any) { c["exp"] = time.Now().Add(-5 * time.Minute) }), "expired"},
		"not yet valid":   {with(func(c map[string]any) { c["nbf"] = time.Now().Add(5 * time.Minute) }), "not yet valid"},
		"no expiration":   {with(func(c map[string]any) { delete(c, "exp") }), "without an expiration"},
		"no principal":    {with(func(c map[string]any) { delete(c, "sub") }), "without the sub claim"},
		"tenant not text": {with(func(c map[string]any) { c["tenant"] = 42 }), "tenant claim is not a string"},
		"bad signature":   {d.Sign(d.Claims("alice"), other), "signature not verified"},
		"unknown key":     {d.Sign(d.Claims("alice"), d.NewKey("k9")), "signature not verified"},
		"alg none":        {unsigned, "signature not verified"},
		"garbage":         {"eyJhbGciOi.x.y", "malformed"},
		"static token":    {auth.TokenPrefix + "abc", "unknown token"}, // static tokens are on, this one is unknown
	}
	for name, tc := range refused {
		t.Run(name, func(t *testing.T) {
			w := call(h, tc.token)
			if w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") != challenge+`, error="invalid_token"` || !strings.Contains(w.Body.String(), tc.reason) {
				t.Fatalf("status %d, WWW-Authenticate %q: %s", w.Code, w.Header().Get("WWW-Authenticate"), w.Body)
			}
			if strings.Contains(w.Body.String(), tc.token) {
				t.Fatalf("the answer holds the token: %s", w.Body)
			}
		})
	}

	// A clock a little behind the issuer's is tolerated.
	if w := call(h, with(func(c map[string]any) { c["exp"] = time.Now().Add(-20 * time.Second) })); w.Code != http.StatusOK {
		t.Fatalf("expired within the skew: %d %s", w.Code, w.Body)
	}
	if n := d.Fetches.Load(); n != 2 {
		t.Fatalf("the keys were fetched %d times, want twice: at first, and once for the unknown key id", n)
	}
}

func TestAccessTokenClaimMapping(t *testing.T) {
	d := authtest.NewIDP(t)
	a := newAuth(t, d.Config("    claims: {principal: email, tenant: org.id, role: realm_access.roles, profile: https://example.com/profile}\n"), tokenStore(t))
	h := a.Middleware()(whoami)
	c := d.Claims("0b9e-opaque")
	c["email"] = "bob@example.com"
	c["org"] = map[string]any{"id": "initech"}
	c["realm_access"] = map[string]any{"roles": []string{"offline_access", "admin", "approver"}}
	c["https://example.com/profile"] = "night-shift"
	got := principalOf(t, call(h, d.Sign(c, d.Key)))
	if got != (auth.Principal{Name: "bob@example.com", Role: auth.RoleAdmin, Tenant: "initech", Profile: "night-shift"}) {
		t.Fatalf("principal %+v", got)
	}

	// Absent tenant, role and profile: none, user, none. Unknown roles: user.
	c = d.Claims("carol")
	c["email"] = "carol@example.com"
	c["realm_access"] = map[string]any{"roles": []string{"superuser"}}
	delete(c, "tenant")
	got = principalOf(t, call(h, d.Sign(c, d.Key)))
	if got != (auth.Principal{Name: "carol@example.com", Role: auth.RoleUser}) {
		t.Fatalf("principal %+v", got)
	}

	// With tokens off (auth.tokens: false), static tokens are refused.
	if w := call(newAuth(t, d.Config("  tokens: false\n"), nil).Middleware()(whoami), auth.TokenPrefix+"x"); w.Code != http.StatusUnauthorized {
		t.Fatalf("static token with tokens off: %d", w.Code)
	}
}

func TestKeyRotation(t *testing.T) {
	d := authtest.NewIDP(t)
	a := newAuth(t, d.Config(""), tokenStore(t))
	auth.SetJWKSRetry(a, 0)
	h := a.Middleware()(whoami)
	principalOf(t, call(h, d.Sign(d.Claims("alice"), d.Key)))

	k2 := d.NewKey("k2")
	d.Publish(k2)
	if got := principalOf(t, call(h, d.Sign(d.Claims("alice"), k2))); got.Name != "alice" {
		t.Fatalf("principal %+v", got)
	}
	if n := d.Fetches.Load(); n != 2 {
		t.Fatalf("fetches %d, want 2", n)
	}
}

func TestConcurrentFirstRequestsShareOneFetch(t *testing.T) {
	d := authtest.NewIDP(t)
	h := newAuth(t, d.Config(""), tokenStore(t)).Middleware()(whoami)
	token := d.Sign(d.Claims("alice"), d.Key)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if w := call(h, token); w.Code != http.StatusOK {
				t.Errorf("status %d: %s", w.Code, w.Body)
			}
		})
	}
	wg.Wait()
	if n := d.Fetches.Load(); n != 1 {
		t.Fatalf("fetches %d, want 1", n)
	}
}

func TestUnreachableKeysAreAServerError(t *testing.T) {
	d := authtest.NewIDP(t)
	a := newAuth(t, d.Config(""), tokenStore(t))
	token := d.Sign(d.Claims("alice"), d.Key)
	d.Server.Close()
	w := call(a.Middleware()(whoami), token)
	if w.Code != http.StatusInternalServerError || strings.Contains(w.Body.String(), d.Server.URL) {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if _, err := a.Verify(context.Background(), token, nil); err == nil || errors.Is(err, sdkauth.ErrInvalidToken) {
		t.Fatalf("want a failure to check, not a refusal: %v", err)
	}
}

func TestMetadataDocument(t *testing.T) {
	d := authtest.NewIDP(t)
	for name, tc := range map[string]struct {
		extra   string
		servers []string
	}{
		"default: the issuer": {"", []string{d.Issuer}},
		"configured":          {"    authorization_servers: [https://as.example.com/]\n", []string{"https://as.example.com/"}},
	} {
		t.Run(name, func(t *testing.T) {
			a := newAuth(t, d.Config(tc.extra), tokenStore(t))
			w := httptest.NewRecorder()
			a.MetadataHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, auth.MetadataPath, nil))
			var got struct {
				Resource             string   `json:"resource"`
				AuthorizationServers []string `json:"authorization_servers"`
				BearerMethods        []string `json:"bearer_methods_supported"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusOK {
				t.Fatalf("%d %v: %s", w.Code, err, w.Body)
			}
			if got.Resource != resource || strings.Join(got.AuthorizationServers, ",") != strings.Join(tc.servers, ",") ||
				strings.Join(got.BearerMethods, ",") != "header" || w.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("metadata %+v", got)
			}
		})
	}
}

func TestRequireRole(t *testing.T) {
	ctx := context.Background()
	ts := tokenStore(t)
	a := newAuth(t, "auth:\n  resource: "+resource+"\n", ts)
	tokens := map[string]string{}
	for _, role := range []string{auth.RoleUser, auth.RoleApprover, auth.RoleAdmin} {
		tok, err := auth.CreateToken(ctx, ts, auth.Principal{Name: role + "-1", Role: role})
		if err != nil {
			t.Fatal(err)
		}
		tokens[role] = tok
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	tests := map[string]struct {
		caller, needs string
		want          int
	}{
		"user to admin":         {auth.RoleUser, auth.RoleAdmin, http.StatusForbidden},
		"user to approver":      {auth.RoleUser, auth.RoleApprover, http.StatusForbidden},
		"approver to admin":     {auth.RoleApprover, auth.RoleAdmin, http.StatusForbidden},
		"approver to approver":  {auth.RoleApprover, auth.RoleApprover, http.StatusNoContent},
		"admin to approver":     {auth.RoleAdmin, auth.RoleApprover, http.StatusNoContent},
		"admin to user":         {auth.RoleAdmin, auth.RoleUser, http.StatusNoContent},
		"user to user":          {auth.RoleUser, auth.RoleUser, http.StatusNoContent},
		"no token to user":      {"", auth.RoleUser, http.StatusUnauthorized},
		"unknown token to user": {"bogus", auth.RoleUser, http.StatusUnauthorized},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := a.Middleware()(a.RequireRole(tc.needs, ok))
			token := tokens[tc.caller]
			if tc.caller == "bogus" {
				token = "lgt_bogus"
			}
			if w := call(h, token); w.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.want, w.Body)
			}
		})
	}
	// Outside Middleware there is no principal: 401, naming the metadata.
	w := call(a.RequireRole(auth.RoleUser, ok), tokens[auth.RoleAdmin])
	if w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") != challenge {
		t.Fatalf("without middleware: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}

func TestCheckListen(t *testing.T) {
	tests := map[string]struct {
		listen          string
		auth, allow     bool
		wantErr, wantOK bool // wantOK: no warning
	}{
		"loopback v4 without auth":         {"127.0.0.1:8080", false, false, false, true},
		"loopback v6 without auth":         {"[::1]:8080", false, false, false, true},
		"localhost without auth":           {"localhost:8080", false, false, false, true},
		"every interface without auth":     {":8080", false, false, true, false},
		"0.0.0.0 without auth":             {"0.0.0.0:8080", false, false, true, false},
		"public v6 without auth":           {"[::]:8080", false, false, true, false},
		"private address without auth":     {"10.0.0.5:8080", false, false, true, false},
		"0.0.0.0 with auth":                {"0.0.0.0:8080", true, false, false, true},
		"0.0.0.0 allowed unauthenticated":  {"0.0.0.0:8080", false, true, false, false},
		"loopback allowed unauthenticated": {"127.0.0.1:8080", false, true, false, true},
		"malformed":                        {"8080", true, false, true, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			warning, err := auth.CheckListen(tc.listen, tc.auth, tc.allow)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if err == nil && (warning == "") != tc.wantOK {
				t.Fatalf("warning %q", warning)
			}
			if err != nil && !strings.Contains(err.Error(), tc.listen) {
				t.Fatalf("the error does not name the address: %v", err)
			}
		})
	}
}

func TestNewAuthenticatorRefusesBadConfig(t *testing.T) {
	_, err := auth.NewAuthenticator(config.Auth{OAuth: &config.OAuth{Issuer: "https://idp.example.com/"}}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "auth.resource: is required") || !strings.Contains(err.Error(), "auth.oauth.jwks_url: is required") {
		t.Fatalf("got %v", err)
	}
	on := true
	if _, err := auth.NewAuthenticator(config.Auth{Tokens: &on}, nil, nil); err == nil {
		t.Fatal("static tokens without a store accepted")
	}
	a, err := auth.NewAuthenticator(config.Auth{}, nil, nil)
	if err != nil || a.Enabled() {
		t.Fatalf("no auth: %v, enabled %v", err, a.Enabled())
	}
	if w := call(a.Middleware()(whoami), "lgt_x"); w.Code != http.StatusUnauthorized {
		t.Fatalf("a disabled authenticator let a token through: %d", w.Code)
	}
}

const (
	resource    = authtest.Resource
	metadataURL = authtest.MetadataURL
	challenge   = authtest.Challenge
)

// TestAccessTokensAtAProfileURL: at /mcp/{profile}, an issuer's token
// for /mcp or for that URL is accepted, one for another profile's URL is
// not, and a 401 names that URL's metadata.
func TestAccessTokensAtAProfileURL(t *testing.T) {
	d := authtest.NewIDP(t)
	a := newAuth(t, d.Config(""), tokenStore(t))
	mux := http.NewServeMux()
	mux.Handle("/mcp", a.Middleware()(whoami))
	mux.Handle("/mcp/{profile}", a.Middleware()(whoami))
	for_ := func(aud string) string {
		c := d.Claims("alice")
		c["aud"] = []string{aud}
		return d.Sign(c, d.Key)
	}
	at := func(path, token string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader("{}"))
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		return w
	}
	for _, c := range []struct {
		path, aud string
		ok        bool
	}{
		{"/mcp/coding", resource, true},
		{"/mcp/coding", resource + "/coding", true},
		{"/mcp/mail", resource + "/coding", false},
		{"/mcp", resource + "/coding", false},
	} {
		w := at(c.path, for_(c.aud))
		if ok := w.Code == http.StatusOK; ok != c.ok {
			t.Errorf("a token for %s at %s: %d %s", c.aud, c.path, w.Code, w.Body)
		}
		if !c.ok && c.path == "/mcp/mail" && w.Header().Get("WWW-Authenticate") != `Bearer resource_metadata="`+metadataURL+`/mcp/mail", error="invalid_token"` {
			t.Errorf("the challenge at /mcp/mail: %q", w.Header().Get("WWW-Authenticate"))
		}
	}
	if got := a.Resource("coding"); got != resource+"/coding" {
		t.Errorf("Resource(coding) = %q", got)
	}
}
