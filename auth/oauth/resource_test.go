package oauth_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/auth/oauth"
	"github.com/legate-mcp/legate/config"
)

// TestTokenForAnotherResource: a token the same issuer (same key) made
// for another resource is refused by /mcp's verifier.
func TestTokenForAnotherResource(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	other, err := oauth.New(ctx, config.Auth{Resource: h.issuer + "/other", OAuthServer: &config.OAuthServer{}}, oauth.Options{Store: h.st})
	if err != nil {
		t.Fatal(err)
	}
	redirect := "http://127.0.0.1:33418/callback"
	client := h.register(redirect)
	loc := h.authorize(client, redirect, verifier, nil)
	_, tr := h.exchange(client, redirect, loc.Query().Get("code"), verifier)
	if _, _, _, err := h.as.VerifyAccessToken(ctx, tr.AccessToken); err != nil {
		t.Fatalf("the token for its own resource: %v", err)
	}
	if _, _, _, err := other.VerifyAccessToken(ctx, tr.AccessToken); !refused(err) || !strings.Contains(err.Error(), "not issued for this resource") {
		t.Fatalf("a token for another resource: %v, want refused as such", err)
	}
}

// TestAuthenticatorAcceptsLocalTokens: with the authorization server set
// up, /mcp's authenticator takes its tokens, names the person, and the
// protected resource metadata names the server.
func TestAuthenticatorAcceptsLocalTokens(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	cfg := config.Auth{Resource: h.resource, OAuthServer: &config.OAuthServer{}}
	a, err := auth.NewAuthenticator(cfg, h.st.Tokens(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oauth.Setup(ctx, cfg, h.st, nil, a, nopLog()); err != nil {
		t.Fatal(err)
	}
	redirect := "http://127.0.0.1:33418/callback"
	client := h.register(redirect)
	loc := h.authorize(client, redirect, verifier, nil)
	_, tr := h.exchange(client, redirect, loc.Query().Get("code"), verifier)
	ti, err := a.Verify(ctx, tr.AccessToken, nil)
	if p := auth.PrincipalFrom(ti); err != nil || p == nil || p.Name != "bob" || p.Tenant != "acme" || !strings.HasPrefix(ti.UserID, "oauth ") {
		t.Fatalf("verify: %+v %v", ti, err)
	}
	if _, err := a.Verify(ctx, tr.AccessToken+"x", nil); !refused(err) {
		t.Fatalf("a forged token: %v, want refused", err)
	}
	rec := httptest.NewRecorder()
	a.MetadataHandler().ServeHTTP(rec, httptest.NewRequest("GET", h.issuer+auth.MetadataPath, nil))
	var m struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || m.Resource != h.resource || len(m.AuthorizationServers) != 1 || m.AuthorizationServers[0] != h.issuer {
		t.Fatalf("protected resource metadata: %s", rec.Body)
	}
}
