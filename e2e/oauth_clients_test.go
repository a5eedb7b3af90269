package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestOAuthClientKinds: each kind of client the README's client section
// adds Legate to, given Legate's URL and nothing else, runs the whole flow
// with the Go SDK's OAuth handler (discovery from the 401, dynamic
// registration, PKCE, the browser's login and consent, the code exchange)
// and lists and calls tools as alice:
//   - a hosted connector (Claude's custom connector, ChatGPT, Le Chat): an
//     https callback on the client's site, where its server takes the code
//     and exchanges it with the client secret it registered for;
//   - an IDE or CLI (VS Code, Claude Code): a public client with a
//     loopback callback;
//   - a desktop app with a private-use scheme callback (Cursor).
func TestOAuthClientKinds(t *testing.T) {
	need(t)
	s, state, config := oauthLegate(t)
	for _, c := range []struct{ name, redirect, method string }{
		{"hosted connector, client_secret_post", "https://claude.ai/api/mcp/auth_callback", "client_secret_post"},
		{"hosted connector, client_secret_basic", "https://connector.example/oauth/callback", "client_secret_basic"},
		{"loopback callback", "http://127.0.0.1:33418/", "none"},
		{"private-use scheme", "cursor://anysphere.cursor-mcp/oauth/callback", "none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			oauth := oauthHandler(t, c.redirect, c.method, func(b *http.Client, authURL string) error {
				return userAgent(b, authURL, "alice", oauthPassword)
			})
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "oauth-kinds", Version: "1"}, nil).
				Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url("127.0.0.1"), OAuthHandler: oauth}, nil)
			if err != nil {
				t.Fatalf("connecting through the OAuth flow: %v", err)
			}
			defer cs.Close()
			list, err := cs.ListTools(ctx, nil)
			if err != nil || !slices.ContainsFunc(list.Tools, func(tool *mcp.Tool) bool { return tool.Name == "http__request" }) {
				t.Fatalf("tools/list: %+v %v", list, err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "http__request", Arguments: map[string]any{"url": "http://192.0.2.1/"}}); err != nil {
				t.Fatalf("tools/call: %v", err)
			}
			ts, err := oauth.TokenSource(ctx)
			if err != nil || ts == nil {
				t.Fatalf("no token source after the flow: %v", err)
			}
			if tok, err := ts.Token(); err != nil || tok.RefreshToken == "" {
				t.Fatalf("the token response: %v, refresh token %v", err, tok != nil && tok.RefreshToken != "")
			}
		})
	}
	// Each client's call is audited as alice.
	waitFor(t, 10*time.Second, func() bool {
		out, err := legateExec(t, nil, "audit", "query", "--tool", "http.request", "--principal", "alice", "-o", "json", "--state-dir", state, "--config", config)
		var rows []map[string]any
		return err == nil && json.Unmarshal(out, &rows) == nil && len(rows) == 4
	}, "four audit rows of http.request naming alice")
}
