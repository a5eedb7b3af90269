package github_test

// Per-user connections through the whole gateway: people connect the same
// GitHub instance with their own accounts of the stand-in through the real
// consent flow over HTTP, and each call reaches GitHub with the caller's
// token alone.

import (
	"testing"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/server/servertest"
)

func TestPerUserConnections(t *testing.T) {
	s := newStandin(t)
	s.seed(3)
	t.Setenv("PERUSER_GITHUB_CLIENT_SECRET", standinClientSecret)
	g := servertest.Start(t, `
auth: {tokens: true, resource: "${GATEWAY_URL}/mcp"}
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
`)
	bearer := func(name string, role string) string {
		return g.Token(t, auth.Principal{Name: name, Role: role, Tenant: "acme"})
	}
	oauthtest.PerUser{URL: g.URL, Instance: "github", Tenant: "acme",
		Alice: bearer("alice", auth.RoleUser), Bob: bearer("bob", auth.RoleUser), Admin: bearer("ops", auth.RoleAdmin),
		Tool: "github__list_issues", Args: map[string]any{"repo": "acme/api"}}.CheckPerUser(t, s.oauth)
}
