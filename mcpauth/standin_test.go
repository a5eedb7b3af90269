package mcpauth_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/mcpauth"
)

// whoami calls the stand-in's tool as principal.
func (e *env) whoami(t *testing.T, principal string) (string, error) {
	t.Helper()
	cs, err := e.session(t, principal)
	if err != nil {
		return "", err
	}
	ctx := mcpauth.WithCaller(t.Context(), mcpauth.Caller{Principal: principal})
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		return "", err
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

// With a configured client: two principals connect as different users
// of the authorization server, and each call reaches the upstream with
// the caller's own token; a token the upstream refuses (401) is
// refreshed once, naming the resource (RFC 8707) as the code exchange
// did, and the call goes through.
func TestConfiguredClientPerPrincipal(t *testing.T) {
	u, p := oauthtest.ProtectedMCP(t)
	e := newEnvWith(t, u, mcpauth.Upstream{ClientID: "configured", ClientSecret: "shh", Scopes: []string{"tools"}})
	for _, who := range []string{"alice", "bob"} {
		b, au := e.begin(t, e.m, who, who+"-account")
		if status, body, _, err := b.Follow(au); err != nil || status != 200 {
			t.Fatalf("consent of %s: %d %v: %s", who, status, err, body)
		}
	}
	for _, who := range []string{"alice", "bob"} {
		got, err := e.whoami(t, who)
		if err != nil || got != who+"-account" {
			t.Errorf("%s's call reached the upstream as %q (%v)", who, got, err)
		}
	}
	p.Expire("alice-account")
	if got, err := e.whoami(t, "alice"); err != nil || got != "alice-account" || p.Refreshes() != 1 {
		t.Errorf("after expiry: %q %v, %d refreshes; want alice-account after one", got, err, p.Refreshes())
	}
	// A refresh the authorization server refuses: the call is NOT_CONNECTED
	// (alice's to fix, not the upstream's failure), bob's go on.
	p.FailRefresh(true)
	p.Expire("alice-account")
	if _, err := e.whoami(t, "alice"); legate.CodeOf(err) != legate.CodeNotConnected || !strings.Contains(err.Error(), "expired") {
		t.Errorf("alice's call once her token is refused and cannot be refreshed: %v, want NOT_CONNECTED", err)
	}
	if got, err := e.whoami(t, "bob"); err != nil || got != "bob-account" {
		t.Errorf("bob's call after alice's connection expired: %q %v", got, err)
	}
	for _, tok := range p.Issued() {
		if strings.Contains(e.logs.String(), tok) {
			t.Error("a token appears in the log")
		}
	}
}

// An upstream that does not answer 401 is not OAuth-protected: the
// connection fails naming why.
func TestNotProtected(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "nope", http.StatusNotFound) }))
	t.Cleanup(srv.Close)
	e := newEnvWith(t, srv.URL+"/mcp", mcpauth.Upstream{})
	_, err := e.m.LinkURL(t.Context(), "secure", "", "alice", "")
	if err == nil || !strings.Contains(err.Error(), "not 401") || !strings.Contains(err.Error(), "secure") {
		t.Fatalf("LinkURL of an unprotected upstream: %v", err)
	}
}
