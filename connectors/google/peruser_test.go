package google_test

// Per-user connections through the whole gateway: people connect the same
// Google instance with their own accounts of the stand-in through the real
// consent flow over HTTP, and each call reaches Google with the caller's
// token alone.

import (
	"testing"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/server/servertest"
)

func TestPerUserConnections(t *testing.T) {
	s := newStandin(t)
	t.Setenv("PERUSER_GOOGLE_CLIENT_SECRET", clientSecret)
	g := servertest.Start(t, `
auth: {tokens: true, resource: "${GATEWAY_URL}/mcp"}
connectors:
  - type: google
    credentials_mode: per_user
    # The connector exchanges each caller's refresh token for access
    # tokens at the consent endpoints' token endpoint.
    config: {client_id: "`+clientID+`", oauth_url: "`+s.srv.URL+`/oauth/token", sheets_url: "`+s.srv.URL+`/", drive_url: "`+s.srv.URL+`/", allow_private_networks: true, retry_backoff: 1ms}
    credentials: {client_secret: {env: PERUSER_GOOGLE_CLIENT_SECRET}}
    oauth:
      client_id: "`+clientID+`"
      client_secret: {env: PERUSER_GOOGLE_CLIENT_SECRET}
      scopes: [https://www.googleapis.com/auth/drive.readonly]
      authorize_url: "`+s.srv.URL+`/oauth/authorize"
      token_url: "`+s.srv.URL+`/oauth/token"
      revoke_url: "`+s.srv.URL+`/oauth/revoke"
`)
	bearer := func(name string, role string) string {
		return g.Token(t, auth.Principal{Name: name, Role: role, Tenant: "acme"})
	}
	oauthtest.PerUser{URL: g.URL, Instance: "google", Tenant: "acme",
		Alice: bearer("alice", auth.RoleUser), Bob: bearer("bob", auth.RoleUser), Admin: bearer("ops", auth.RoleAdmin),
		Tool: "google__drive_list_files", RevokesAtProvider: true, Args: map[string]any{}}.CheckPerUser(t, s.oauth)
}
