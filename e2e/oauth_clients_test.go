package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
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

// TestOAuthRevokeAndDisable: against a running server, `legate token
// revoke oauth:…` ends a grant and `legate user disable` a person: their
// access tokens are refused at the next request (invalid_token), and a
// disabled person logs in no more.
func TestOAuthRevokeAndDisable(t *testing.T) {
	need(t)
	s, state, config := oauthLegate(t)
	ctx := t.Context()
	login := func() string {
		t.Helper()
		oauth := oauthHandler(t, "http://127.0.0.1:33418/", "none", func(b *http.Client, authURL string) error {
			return userAgent(b, authURL, "alice", oauthPassword)
		})
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "oauth-revoke", Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url("127.0.0.1"), OAuthHandler: oauth}, nil)
		if err != nil {
			t.Fatalf("connecting through the OAuth flow: %v", err)
		}
		cs.Close()
		ts, err := oauth.TokenSource(ctx)
		if err != nil || ts == nil {
			t.Fatalf("no token source: %v", err)
		}
		tok, err := ts.Token()
		if err != nil {
			t.Fatal(err)
		}
		return tok.AccessToken
	}
	// initialize answers the status of an initialize bearing token, and
	// its WWW-Authenticate.
	initialize := func(token string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url("127.0.0.1"), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
	}

	first := login()
	if status, _ := initialize(first); status != http.StatusOK {
		t.Fatalf("alice's access token: %d", status)
	}
	list := legateRun(t, nil, "token", "list", "--state-dir", state, "--config", config)
	grant := regexp.MustCompile(`oauth:\S+`).Find(list)
	if grant == nil {
		t.Fatalf("token list shows no grant:\n%s", list)
	}
	legateRun(t, nil, "token", "revoke", string(grant), "--state-dir", state, "--config", config)
	if status, challenge := initialize(first); status != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) {
		t.Fatalf("an access token of a revoked grant: %d %q", status, challenge)
	}

	second := login()
	if status, _ := initialize(second); status != http.StatusOK {
		t.Fatalf("alice's access token of a new grant: %d", status)
	}
	legateRun(t, nil, "user", "disable", "alice", "--state-dir", state, "--config", config)
	if status, challenge := initialize(second); status != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) {
		t.Fatalf("an access token of a disabled user: %d %q", status, challenge)
	}
	oauth := oauthHandler(t, "http://127.0.0.1:33418/", "none", func(b *http.Client, authURL string) error {
		return userAgent(b, authURL, "alice", oauthPassword)
	})
	if _, err := mcp.NewClient(&mcp.Implementation{Name: "oauth-disabled", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url("127.0.0.1"), OAuthHandler: oauth}, nil); err == nil || !strings.Contains(err.Error(), "/oauth/login: 401") {
		t.Fatalf("a disabled user logs in: %v, want the login refused", err)
	}
}
