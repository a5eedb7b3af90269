package email_test

// Per-user connections through the whole gateway: people connect the same
// email instance with their own accounts of the OAuth stand-in through
// the real consent flow over HTTP, and each signs in to IMAP over XOAUTH2
// with their own access token alone.

import (
	"net"
	"testing"

	"github.com/emersion/go-imap/v2"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/connectors/saas/oauthtest"
	"github.com/legate-mcp/legate/server/servertest"
)

// Select records the bearer of the session's every folder opened, as an
// API stand-in records the bearer of each request, so that a call on a
// pooled connection is seen with its token too.
func (is *imapSession) Select(mailbox string, opts *imap.SelectOptions) (*imap.SelectData, error) {
	if is.token != "" {
		is.s.bearer(is.username, is.token)
	}
	return is.SessionIMAP4rev2.Select(mailbox, opts)
}

func TestPerUserConnections(t *testing.T) {
	s := newStandin(t)
	base := s.withOAuth(t)
	seedInbox(t, s, 2)
	t.Setenv("PERUSER_EMAIL_CLIENT_SECRET", oauthSecret)
	ih, ip, _ := net.SplitHostPort(s.imapAddr)
	sh, sp, _ := net.SplitHostPort(s.smtpAddr)
	g := servertest.Start(t, `
auth: {tokens: true, resource: "${GATEWAY_URL}/mcp"}
connectors:
  - type: email
    credentials_mode: per_user
    # Each caller signs in to their own mailbox with the access token of
    # their connection, which the gateway refreshes.
    config:
      auth: xoauth2
      imap_host: `+ih+`
      imap_port: `+ip+`
      imap_security: insecure
      imap_username: "{principal}@example.com"
      smtp_host: `+sh+`
      smtp_port: `+sp+`
      smtp_security: insecure
      smtp_username: "{principal}@example.com"
      from: "{principal}@example.com"
      allow_private_networks: true
      retry_backoff: 1ms
    oauth:
      client_id: "`+oauthClientID+`"
      client_secret: {env: PERUSER_EMAIL_CLIENT_SECRET}
      scopes: [https://mail.google.com/]
      authorize_url: "`+base+`/oauth/authorize"
      token_url: "`+base+`/oauth/token"
      revoke_url: "`+base+`/oauth/revoke"
      credential: oauth_access_token
`)
	bearer := func(name string, role string) string {
		return g.Token(t, auth.Principal{Name: name, Role: role, Tenant: "acme"})
	}
	oauthtest.PerUser{URL: g.URL, Instance: "email", Tenant: "acme",
		Alice: bearer("alice", auth.RoleUser), Bob: bearer("bob", auth.RoleUser), Admin: bearer("ops", auth.RoleAdmin),
		Tool: "email__search", RevokesAtProvider: true, Args: map[string]any{}}.CheckPerUser(t, s.oauth)
}
