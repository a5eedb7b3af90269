package server_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

const (
	resource    = "https://legate.example.com/mcp"
	metadataURL = "https://legate.example.com/.well-known/oauth-protected-resource"
	challenge   = `Bearer resource_metadata="` + metadataURL + `"`
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
func newAuth(t *testing.T, doc string, tokens store.TokenStore) *server.Authenticator {
	t.Helper()
	f, err := config.Parse([]byte(doc), nil)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	a, err := server.NewAuthenticator(f.Auth, tokens, nil)
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
	json.NewEncoder(w).Encode(server.PrincipalFromContext(r.Context()))
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

func principalOf(t *testing.T, w *httptest.ResponseRecorder) server.Principal {
	t.Helper()
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var p server.Principal
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
	alice, err := server.CreateToken(ctx, ts, server.Principal{Name: "alice", Tenant: "acme", Profile: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(alice, server.TokenPrefix) || len(alice) != len(server.TokenPrefix)+43 {
		t.Fatalf("token %q: want the prefix and 32 bytes in base64url", alice)
	}
	if _, err := server.CreateToken(ctx, ts, server.Principal{Name: "alice"}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate name: %v", err)
	}
	for _, bad := range []server.Principal{{Name: "has space"}, {Name: "x", Role: "root"}, {Name: "x", Tenant: "a\nb"}} {
		if _, err := server.CreateToken(ctx, ts, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}

	ti, err := a.Verify(ctx, alice, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := server.PrincipalFrom(ti)
	if ti.UserID == "" || time.Until(ti.Expiration) < time.Hour || p == nil ||
		*p != (server.Principal{Name: "alice", Role: server.RoleUser, Tenant: "acme", Profile: "dev"}) {
		t.Fatalf("token info %+v, principal %+v", ti, p)
	}

	h := a.Middleware()(whoami)
	if got := principalOf(t, call(h, alice)); got.Name != "alice" || got.Tenant != "acme" || got.Role != server.RoleUser {
		t.Fatalf("principal %+v", got)
	}
	wrong := server.TokenPrefix + strings.Repeat("A", 43)
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
	if _, err := a.Verify(ctx, alice, nil); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("revoked: %v", err)
	}
}

func TestStaticTokensWithoutResource(t *testing.T) {
	ts := tokenStore(t)
	a := newAuth(t, "auth:\n  tokens: true\n", ts)
	tok, err := server.CreateToken(context.Background(), ts, server.Principal{Name: "ci", Role: server.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	h := a.Middleware()(whoami)
	if got := principalOf(t, call(h, tok)); got.Role != server.RoleAdmin {
		t.Fatalf("principal %+v", got)
	}
	if w := call(h, "lgt_nope"); w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") != `Bearer error="invalid_token"` {
		t.Fatalf("status %d, WWW-Authenticate %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	w := httptest.NewRecorder()
	a.MetadataHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, server.MetadataPath, nil))
	if w.Code != http.StatusNotFound {
		t.Fatalf("metadata without a resource: %d", w.Code)
	}
}

// idp is a fake authorization server: its JWKS over HTTP on 127.0.0.1, and
// tokens signed by its keys.
type idp struct {
	t       *testing.T
	srv     *httptest.Server
	issuer  string
	key     jwk.Key // signs; published
	mu      sync.Mutex
	public  jwk.Set
	fetches atomic.Int32
}

func newIDP(t *testing.T) *idp {
	d := &idp{t: t, public: jwk.NewSet()}
	d.key = d.newKey("k1")
	d.publish(d.key)
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.fetches.Add(1)
		d.mu.Lock()
		defer d.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(d.public)
	}))
	t.Cleanup(d.srv.Close)
	d.issuer = d.srv.URL + "/"
	return d
}

func (d *idp) newKey(kid string) jwk.Key {
	raw, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		d.t.Fatal(err)
	}
	k, err := jwk.Import(raw)
	if err != nil {
		d.t.Fatal(err)
	}
	k.Set(jwk.KeyIDKey, kid)
	return k
}

// publish adds a key's public half to the JWKS, without "alg", as many
// issuers publish them.
func (d *idp) publish(k jwk.Key) {
	pub, err := jwk.PublicKeyOf(k)
	if err != nil {
		d.t.Fatal(err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.public.AddKey(pub)
}

func (d *idp) config(extra string) string {
	return fmt.Sprintf("auth:\n  resource: %s\n  oauth:\n    issuer: %s\n    jwks_url: %s/jwks.json\n%s", resource, d.issuer, d.srv.URL, extra)
}

// claims are a valid token's claims for principal sub.
func (d *idp) claims(sub string) map[string]any {
	return map[string]any{"iss": d.issuer, "aud": []string{resource}, "sub": sub, "exp": time.Now().Add(time.Hour),
		"iat": time.Now(), "tenant": "acme", "role": "approver", "profile": "p1", "scope": "mcp:tools read"}
}

func (d *idp) sign(claims map[string]any, key jwk.Key) string {
	tok := jwt.New()
	for k, v := range claims {
		if err := tok.Set(k, v); err != nil {
			d.t.Fatal(err)
		}
	}
	b, err := jwt.Sign(tok, jwt.WithKey(jwa.ES256(), key))
	if err != nil {
		d.t.Fatal(err)
	}
	return string(b)
}

func TestAccessTokens(t *testing.T) {
	d := newIDP(t)
	a := newAuth(t, d.config(""), tokenStore(t))
	h := a.Middleware()(whoami)

	good := d.sign(d.claims("alice"), d.key)
	got := principalOf(t, call(h, good))
	if got != (server.Principal{Name: "alice", Role: server.RoleApprover, Tenant: "acme", Profile: "p1"}) {
		t.Fatalf("principal %+v", got)
	}
	ti, err := a.Verify(context.Background(), good, nil)
	if err != nil || ti.UserID == "" || time.Until(ti.Expiration) < 50*time.Minute || strings.Join(ti.Scopes, " ") != "mcp:tools read" {
		t.Fatalf("token info %+v, %v", ti, err)
	}

	with := func(change func(map[string]any)) string {
		c := d.claims("alice")
		change(c)
		return d.sign(c, d.key)
	}
	other := d.newKey("k1") // same key id, not the issuer's key
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"k1"}`))
	payload, _ := json.Marshal(map[string]any{"iss": d.issuer, "aud": resource, "sub": "mallory", "exp": time.Now().Add(time.Hour).Unix()})
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
		"bad signature":   {d.sign(d.claims("alice"), other), "signature not verified"},
		"unknown key":     {d.sign(d.claims("alice"), d.newKey("k9")), "signature not verified"},
		"alg none":        {unsigned, "signature not verified"},
		"garbage":         {"eyJhbGciOi.x.y", "malformed"},
		"static token":    {server.TokenPrefix + "abc", "unknown token"}, // static tokens are on, this one is unknown
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
	if n := d.fetches.Load(); n != 2 {
		t.Fatalf("the keys were fetched %d times, want twice: at first, and once for the unknown key id", n)
	}
}

func TestAccessTokenClaimMapping(t *testing.T) {
	d := newIDP(t)
	a := newAuth(t, d.config("    claims: {principal: email, tenant: org.id, role: realm_access.roles, profile: https://example.com/profile}\n"), tokenStore(t))
	h := a.Middleware()(whoami)
	c := d.claims("0b9e-opaque")
	c["email"] = "bob@example.com"
	c["org"] = map[string]any{"id": "initech"}
	c["realm_access"] = map[string]any{"roles": []string{"offline_access", "admin", "approver"}}
	c["https://example.com/profile"] = "night-shift"
	got := principalOf(t, call(h, d.sign(c, d.key)))
	if got != (server.Principal{Name: "bob@example.com", Role: server.RoleAdmin, Tenant: "initech", Profile: "night-shift"}) {
		t.Fatalf("principal %+v", got)
	}

	// Absent tenant, role and profile: none, user, none. Unknown roles: user.
	c = d.claims("carol")
	c["email"] = "carol@example.com"
	c["realm_access"] = map[string]any{"roles": []string{"superuser"}}
	delete(c, "tenant")
	got = principalOf(t, call(h, d.sign(c, d.key)))
	if got != (server.Principal{Name: "carol@example.com", Role: server.RoleUser}) {
		t.Fatalf("principal %+v", got)
	}

	// With tokens off (auth.tokens: false), static tokens are refused.
	if w := call(newAuth(t, d.config("  tokens: false\n"), nil).Middleware()(whoami), server.TokenPrefix+"x"); w.Code != http.StatusUnauthorized {
		t.Fatalf("static token with tokens off: %d", w.Code)
	}
}

func TestKeyRotation(t *testing.T) {
	d := newIDP(t)
	a := newAuth(t, d.config(""), tokenStore(t))
	server.SetJWKSRetry(a, 0)
	h := a.Middleware()(whoami)
	principalOf(t, call(h, d.sign(d.claims("alice"), d.key)))

	k2 := d.newKey("k2")
	d.publish(k2)
	if got := principalOf(t, call(h, d.sign(d.claims("alice"), k2))); got.Name != "alice" {
		t.Fatalf("principal %+v", got)
	}
	if n := d.fetches.Load(); n != 2 {
		t.Fatalf("fetches %d, want 2", n)
	}
}

func TestConcurrentFirstRequestsShareOneFetch(t *testing.T) {
	d := newIDP(t)
	h := newAuth(t, d.config(""), tokenStore(t)).Middleware()(whoami)
	token := d.sign(d.claims("alice"), d.key)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if w := call(h, token); w.Code != http.StatusOK {
				t.Errorf("status %d: %s", w.Code, w.Body)
			}
		})
	}
	wg.Wait()
	if n := d.fetches.Load(); n != 1 {
		t.Fatalf("fetches %d, want 1", n)
	}
}

func TestUnreachableKeysAreAServerError(t *testing.T) {
	d := newIDP(t)
	a := newAuth(t, d.config(""), tokenStore(t))
	token := d.sign(d.claims("alice"), d.key)
	d.srv.Close()
	w := call(a.Middleware()(whoami), token)
	if w.Code != http.StatusInternalServerError || strings.Contains(w.Body.String(), d.srv.URL) {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if _, err := a.Verify(context.Background(), token, nil); err == nil || errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("want a failure to check, not a refusal: %v", err)
	}
}

func TestMetadataDocument(t *testing.T) {
	d := newIDP(t)
	for name, tc := range map[string]struct {
		extra   string
		servers []string
	}{
		"default: the issuer": {"", []string{d.issuer}},
		"configured":          {"    authorization_servers: [https://as.example.com/]\n", []string{"https://as.example.com/"}},
	} {
		t.Run(name, func(t *testing.T) {
			a := newAuth(t, d.config(tc.extra), tokenStore(t))
			w := httptest.NewRecorder()
			a.MetadataHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, server.MetadataPath, nil))
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
	for _, role := range []string{server.RoleUser, server.RoleApprover, server.RoleAdmin} {
		tok, err := server.CreateToken(ctx, ts, server.Principal{Name: role + "-1", Role: role})
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
		"user to admin":         {server.RoleUser, server.RoleAdmin, http.StatusForbidden},
		"user to approver":      {server.RoleUser, server.RoleApprover, http.StatusForbidden},
		"approver to admin":     {server.RoleApprover, server.RoleAdmin, http.StatusForbidden},
		"approver to approver":  {server.RoleApprover, server.RoleApprover, http.StatusNoContent},
		"admin to approver":     {server.RoleAdmin, server.RoleApprover, http.StatusNoContent},
		"admin to user":         {server.RoleAdmin, server.RoleUser, http.StatusNoContent},
		"user to user":          {server.RoleUser, server.RoleUser, http.StatusNoContent},
		"no token to user":      {"", server.RoleUser, http.StatusUnauthorized},
		"unknown token to user": {"bogus", server.RoleUser, http.StatusUnauthorized},
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
	w := call(a.RequireRole(server.RoleUser, ok), tokens[server.RoleAdmin])
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
			warning, err := server.CheckListen(tc.listen, tc.auth, tc.allow)
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
	_, err := server.NewAuthenticator(config.Auth{OAuth: &config.OAuth{Issuer: "https://idp.example.com/"}}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "auth.resource: is required") || !strings.Contains(err.Error(), "auth.oauth.jwks_url: is required") {
		t.Fatalf("got %v", err)
	}
	on := true
	if _, err := server.NewAuthenticator(config.Auth{Tokens: &on}, nil, nil); err == nil {
		t.Fatal("static tokens without a store accepted")
	}
	a, err := server.NewAuthenticator(config.Auth{}, nil, nil)
	if err != nil || a.Enabled() {
		t.Fatalf("no auth: %v, enabled %v", err, a.Enabled())
	}
	if w := call(a.Middleware()(whoami), "lgt_x"); w.Code != http.StatusUnauthorized {
		t.Fatalf("a disabled authenticator let a token through: %d", w.Code)
	}
}
