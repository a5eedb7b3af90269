package notion_test

// Per-user connections through the whole gateway: people connect the same
// Notion instance with their own accounts of the stand-in through the real
// consent flow over HTTP, and each call reaches Notion with the caller's
// token alone.

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"testing"

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
	s.addPage("workspace", "", "Roadmap", nil)
	t.Setenv("PERUSER_NOTION_CLIENT_SECRET", standinClientSecret)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	cfg, err := config.Parse([]byte(`
auth: {tokens: true, resource: "`+base+`/mcp"}
connectors:
  - type: notion
    credentials_mode: per_user
    config: {base_url: "`+s.srv.URL+`", allow_private_networks: true, retry_backoff: 1ms}
    oauth:
      client_id: "`+standinClientID+`"
      client_secret: {env: PERUSER_NOTION_CLIENT_SECRET}
      authorize_url: "`+s.srv.URL+`/v1/oauth/authorize"
      token_url: "`+s.srv.URL+`/v1/oauth/token"
      revoke_url: "`+s.srv.URL+`/v1/oauth/revoke"
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
	oauthtest.PerUser{URL: base, Instance: "notion", Tenant: "acme",
		Alice: bearer("alice", auth.RoleUser), Bob: bearer("bob", auth.RoleUser), Admin: bearer("ops", auth.RoleAdmin),
		Tool: "notion__search", RevokesAtProvider: true, Args: map[string]any{"query": "Roadmap"}}.CheckPerUser(t, s.oauth)
}
