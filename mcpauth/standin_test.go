package mcpauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/mcpauth"
)

// goUpstream is a Go stand-in of a protected MCP server whose
// authorization server is oauthtest's: the resource answers 401 with
// resource_metadata (RFC 9728), the authorization server publishes its
// metadata (RFC 8414) without a registration endpoint, so the client is
// configured. Its one tool, whoami, answers the stand-in user whose
// token the call carried.
func goUpstream(t *testing.T) (string, *oauthtest.Provider) {
	t.Helper()
	p := oauthtest.New("configured", "shh", "at-")
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.Resource = srv.URL + "/mcp" // every code exchange and refresh must name it
	p.Mount(func(pat string, h http.HandlerFunc) { mux.Handle(pat, h) }, "/oauth")
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"issuer": srv.URL, "authorization_endpoint": srv.URL + "/oauth/authorize", "token_endpoint": srv.URL + "/oauth/token",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"}})
	})
	mux.Handle("/.well-known/oauth-protected-resource/mcp", sdkauth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{Resource: srv.URL + "/mcp", AuthorizationServers: []string{srv.URL}}))
	server := mcp.NewServer(&mcp.Implementation{Name: "standin", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Extra.TokenInfo.UserID}}}, nil, nil
	})
	verify := func(_ context.Context, tok string, _ *http.Request) (*sdkauth.TokenInfo, error) {
		user, ok := p.User(tok)
		if !ok {
			return nil, sdkauth.ErrInvalidToken
		}
		return &sdkauth.TokenInfo{UserID: user, Expiration: time.Now().Add(time.Hour)}, nil
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	mux.Handle("/mcp", sdkauth.RequireBearerToken(verify, &sdkauth.RequireBearerTokenOptions{ResourceMetadataURL: srv.URL + "/.well-known/oauth-protected-resource/mcp"})(h))
	return srv.URL + "/mcp", p
}

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
	u, p := goUpstream(t)
	e := newEnvWith(t, u, mcpauth.Upstream{ClientID: "configured", ClientSecret: "shh", Scopes: []string{"tools"}})
	for _, who := range []string{"alice", "bob"} {
		au, err := e.m.AuthURL(t.Context(), "secure", "", who, "")
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.Get(au + "&user=" + who + "-account")
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("consent of %s: %v %v", who, res, err)
		}
		res.Body.Close()
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
	_, err := e.m.AuthURL(t.Context(), "secure", "", "alice", "")
	if err == nil || !strings.Contains(err.Error(), "not 401") || !strings.Contains(err.Error(), "secure") {
		t.Fatalf("AuthURL of an unprotected upstream: %v", err)
	}
}
