package notion_test

// Per-user connections through the whole gateway: people connect the same
// Notion instance with their own accounts of the stand-in through the real
// consent flow over HTTP, and each call reaches Notion with the caller's
// token alone.

import (
	"testing"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/server/servertest"
)

func TestPerUserConnections(t *testing.T) {
	s := newStandin(t)
	s.addPage("workspace", "", "Roadmap", nil)
	t.Setenv("PERUSER_NOTION_CLIENT_SECRET", standinClientSecret)
	g := servertest.Start(t, `
auth: {tokens: true, resource: "${GATEWAY_URL}/mcp"}
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
`)
	bearer := func(name string, role string) string {
		return g.Token(t, auth.Principal{Name: name, Role: role, Tenant: "acme"})
	}
	oauthtest.PerUser{URL: g.URL, Instance: "notion", Tenant: "acme",
		Alice: bearer("alice", auth.RoleUser), Bob: bearer("bob", auth.RoleUser), Admin: bearer("ops", auth.RoleAdmin),
		Tool: "notion__search", RevokesAtProvider: true, Args: map[string]any{"query": "Roadmap"}}.CheckPerUser(t, s.oauth)
}
