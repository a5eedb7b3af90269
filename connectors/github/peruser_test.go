package github_test

// Per-user connections through the whole gateway: people connect the same
// GitHub instance with their own accounts of the stand-in through the real
// consent flow over HTTP, and each call reaches GitHub with the caller's
// token alone.

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/vault"
)

func TestPerUserConnections(t *testing.T) {
	ctx := context.Background()
	s := newStandin(t)
	s.seed(3)
	t.Setenv("PERUSER_GITHUB_CLIENT_SECRET", standinClientSecret)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	cfg, err := config.Parse([]byte(`
auth: {tokens: true, resource: "`+base+`/mcp"}
connectors:
  - type: github
    credentials_mode: per_user
    config: {base_url: "`+s.srv.URL+`/", allow_private_networks: true, retry_backoff: 1ms}
    oauth:
      client_id: "`+standinClientID+`"
      client_secret: {env: PERUSER_GITHUB_CLIENT_SECRET}
      scopes: [repo]
      authorize_url: "`+s.srv.URL+`/login/oauth/authorize"
      token_url: "`+s.srv.URL+`/login/oauth/token"
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	v := vault.New(st.Secrets(), vault.SourceFromEnv(func(string) string { return "" }, t.TempDir()), nil)
	gw, err := server.New(ctx, server.Options{Config: cfg, Store: st, Vault: v, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	gw.Start(ctx)
	hs := &http.Server{Handler: gw.Handler(ln.Addr().String())}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close(); gw.Close() })

	bearer := func(name string, role string) string {
		tok, err := auth.CreateToken(ctx, st.Tokens(), auth.Principal{Name: name, Role: role, Tenant: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	session := func(tok string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp",
			HTTPClient: &http.Client{Transport: oauthtest.WithBearer(tok, http.DefaultTransport)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	// list calls list_issues and returns the result's error code ("" on
	// success) and the token its one call to GitHub came with ("" when
	// GitHub was not called).
	list := func(cs *mcp.ClientSession) (code string, used oauthtest.Call) {
		t.Helper()
		before := len(s.oauth.Calls())
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "github__list_issues", Arguments: map[string]any{"repo": "acme/api"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			b, _ := json.Marshal(res)
			var out struct {
				Structured struct {
					Error struct{ Code string } `json:"error"`
				} `json:"structuredContent"`
				Meta map[string]struct{ Code string } `json:"_meta"`
			}
			json.Unmarshal(b, &out)
			code = out.Structured.Error.Code + out.Meta[server.ErrorMetaKey].Code
			if code == "" {
				code = "ERROR " + string(b)
			}
		}
		if calls := s.oauth.Calls()[before:]; len(calls) == 1 {
			used = calls[0]
		} else if len(calls) > 1 {
			t.Fatalf("one list_issues made %d calls to GitHub", len(calls))
		}
		return code, used
	}

	aliceTok, bobTok := bearer("alice", auth.RoleUser), bearer("bob", auth.RoleUser)
	alice, bob := session(aliceTok), session(bobTok)
	if code, used := list(alice); code != "NOT_CONNECTED" || used.Token != "" {
		t.Fatalf("before connecting, alice's call: %q, reached GitHub with %q", code, used.Token)
	}
	for tok, account := range map[string]string{aliceTok: "alice-gh", bobTok: "bob-gh"} {
		if _, err := oauthtest.Connect(base+"/connect/github", tok, account); err != nil {
			t.Fatal(err)
		}
	}

	// Each call reaches GitHub with its caller's own token, never the other's.
	tokens := map[string]string{}
	for range 2 {
		for who, cs := range map[string]*mcp.ClientSession{"alice-gh": alice, "bob-gh": bob} {
			code, used := list(cs)
			if code != "" || used.User != who {
				t.Fatalf("%s's call: %q, reached GitHub as %q", who, code, used.User)
			}
			if tokens[who] != "" && tokens[who] != used.Token {
				t.Fatalf("%s's calls came with different tokens", who)
			}
			tokens[who] = used.Token
		}
	}
	if tokens["alice-gh"] == tokens["bob-gh"] {
		t.Fatal("alice and bob reached GitHub with the same token")
	}

	// Revoking bob's connection disconnects bob alone.
	req, _ := http.NewRequest("DELETE", base+"/admin/v1/connections/github?tenant=acme&principal=bob", nil)
	req.Header.Set("Authorization", "Bearer "+bearer("ops", auth.RoleAdmin))
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusNoContent {
		t.Fatalf("revoking bob: %v %v", res, err)
	}
	if code, used := list(bob); code != "NOT_CONNECTED" || used.Token != "" {
		t.Fatalf("bob after his revocation: %q, reached GitHub with a token of %q", code, used.User)
	}
	if code, used := list(alice); code != "" || used.User != "alice-gh" || used.Token != tokens["alice-gh"] {
		t.Fatalf("alice after bob's revocation: %q, reached GitHub as %q", code, used.User)
	}
}
