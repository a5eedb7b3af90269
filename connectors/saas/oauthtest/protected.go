package oauthtest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Serve serves p's endpoints under /oauth on a test server for t and
// returns its base URL: /oauth/authorize, /oauth/token and /oauth/revoke.
func Serve(t testing.TB, p *Provider) string {
	t.Helper()
	mux := http.NewServeMux()
	p.Mount(func(pat string, h http.HandlerFunc) { mux.Handle(pat, h) }, "/oauth")
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// ProtectedMCP serves, for t, an MCP server protected by a Provider (client
// "configured", secret "shh"): the resource answers 401 with
// resource_metadata (RFC 9728), the authorization server publishes its
// metadata (RFC 8414) without a registration endpoint, so the client is
// configured, and every code exchange and refresh must name the resource
// (RFC 8707). Its one tool, whoami, answers the stand-in user whose token
// the call carried, and an error to a call that answers input requests it
// never made. It returns the MCP endpoint's URL and the provider.
func ProtectedMCP(t testing.TB) (string, *Provider) {
	t.Helper()
	p := New("configured", "shh", "at-")
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.Resource = srv.URL + "/mcp"
	p.Mount(func(pat string, h http.HandlerFunc) { mux.Handle(pat, h) }, "/oauth")
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"issuer": srv.URL, "authorization_endpoint": srv.URL + "/oauth/authorize", "token_endpoint": srv.URL + "/oauth/token",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"}})
	})
	mux.Handle("/.well-known/oauth-protected-resource/mcp", sdkauth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{Resource: srv.URL + "/mcp", AuthorizationServers: []string{srv.URL}}))
	s := mcp.NewServer(&mcp.Implementation{Name: "standin", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		if len(req.Params.InputResponses) > 0 { // a gateway's own question is none of the upstream's business
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "answers to no question of mine"}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Extra.TokenInfo.UserID}}}, nil, nil
	})
	verify := func(_ context.Context, tok string, _ *http.Request) (*sdkauth.TokenInfo, error) {
		user, ok := p.User(tok)
		if !ok {
			return nil, sdkauth.ErrInvalidToken
		}
		return &sdkauth.TokenInfo{UserID: user, Expiration: time.Now().Add(time.Hour)}, nil
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	mux.Handle("/mcp", sdkauth.RequireBearerToken(verify, &sdkauth.RequireBearerTokenOptions{ResourceMetadataURL: srv.URL + "/.well-known/oauth-protected-resource/mcp"})(h))
	return srv.URL + "/mcp", p
}
