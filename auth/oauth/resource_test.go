package oauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
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

// TestTokenForAProfileURL: a client pointed at /mcp/{profile} asks for a
// token for that URL (RFC 8707); its audience names that URL, so it is
// accepted there and refused at /mcp and at another profile's URL, while
// a token for /mcp is accepted at every profile's URL. A resource that
// is not /mcp or one segment below it is refused with invalid_target.
func TestTokenForAProfileURL(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	redirect := "http://127.0.0.1:33418/callback"
	client := h.register(redirect)
	coding, mail := h.resource+"/coding", h.resource+"/mail"
	loc := h.authorize(client, redirect, verifier, url.Values{"resource": {coding}})
	status, tr := h.token(url.Values{"grant_type": {"authorization_code"}, "client_id": {client}, "redirect_uri": {redirect},
		"code": {loc.Query().Get("code")}, "code_verifier": {verifier}, "resource": {coding}})
	if status != http.StatusOK || tr.AccessToken == "" {
		t.Fatalf("token for %s: %d %+v", coding, status, tr)
	}
	if p, _, _, err := h.as.VerifyAccessToken(ctx, tr.AccessToken, h.resource, coding); err != nil || p.Name != "bob" {
		t.Errorf("the token for /mcp/coding at /mcp/coding: %v %v", p, err)
	}
	for name, at := range map[string][]string{"/mcp": nil, "/mcp/mail": {h.resource, mail}} {
		if _, _, _, err := h.as.VerifyAccessToken(ctx, tr.AccessToken, at...); !refused(err) || !strings.Contains(err.Error(), "not issued for this resource") {
			t.Errorf("the token for /mcp/coding at %s: %v, want refused", name, err)
		}
	}
	// Refreshed, it keeps its audience.
	status, tr2 := h.refresh(client, tr.RefreshToken)
	if status != http.StatusOK {
		t.Fatalf("refresh: %d %+v", status, tr2)
	}
	if _, _, _, err := h.as.VerifyAccessToken(ctx, tr2.AccessToken); !refused(err) {
		t.Errorf("the refreshed token for /mcp/coding at /mcp: %v, want refused", err)
	}
	if _, _, _, err := h.as.VerifyAccessToken(ctx, tr2.AccessToken, h.resource, coding); err != nil {
		t.Errorf("the refreshed token for /mcp/coding at /mcp/coding: %v", err)
	}
	// A token for /mcp works at a profile's URL.
	loc = h.authorize(client, redirect, verifier, nil)
	_, base := h.exchange(client, redirect, loc.Query().Get("code"), verifier)
	if _, _, _, err := h.as.VerifyAccessToken(ctx, base.AccessToken, h.resource, mail); err != nil {
		t.Errorf("the token for /mcp at /mcp/mail: %v", err)
	}
	for _, res := range []string{h.resource + "/a/b", h.resource + "/", h.resource + "x", "http://127.0.0.1:1/mcp/coding"} {
		status, e := h.token(url.Values{"grant_type": {"refresh_token"}, "client_id": {client}, "refresh_token": {base.RefreshToken}, "resource": {res}})
		if status != http.StatusBadRequest || e.Error != "invalid_target" {
			t.Errorf("resource %s: %d %+v, want invalid_target", res, status, e)
		}
	}
}
