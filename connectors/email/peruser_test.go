package email_test

// Per-user connections through the whole gateway: people connect the same
// email instance with their own accounts of the OAuth stand-in through
// the real consent flow over HTTP, and each signs in to IMAP over XOAUTH2
// with their own access token alone.

import (
	"net"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"

	"github.com/legate-mcp/legate/auth"
	legateconfig "github.com/legate-mcp/legate/config"
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

// An email instance's oauth section may name gmail or microsoft for their
// endpoints and mail scopes, and its connections supply
// oauth_access_token; another provider, or a provider on another type, is
// refused naming the field.
func TestOAuthProviderShortcut(t *testing.T) {
	parse := func(typ, provider string) (*legateconfig.File, error) {
		return legateconfig.Parse([]byte(`
connectors:
  - type: `+typ+`
    credentials_mode: per_user
    config: {auth: xoauth2, imap_host: imap.example.com, imap_username: "{principal}", smtp_host: smtp.example.com, smtp_username: "{principal}", from: "{principal}"}
    oauth: {client_id: app, provider: `+provider+`}
`), func(string) (string, bool) { return "", false })
	}
	for provider, want := range map[string]struct{ authorize, token, scope string }{
		"gmail":     {"https://accounts.google.com/o/oauth2/v2/auth", "https://oauth2.googleapis.com/token", "https://mail.google.com/"},
		"microsoft": {"https://login.microsoftonline.com/common/oauth2/v2.0/authorize", "https://login.microsoftonline.com/common/oauth2/v2.0/token", "https://outlook.office.com/IMAP.AccessAsUser.All https://outlook.office.com/SMTP.Send offline_access"},
	} {
		f, err := parse("email", provider)
		if err != nil {
			t.Fatalf("%s: %v", provider, err)
		}
		app := f.Connectors[0].OAuthApp()
		if app.AuthorizeURL != want.authorize || app.TokenURL != want.token || strings.Join(app.Scopes, " ") != want.scope || f.Connectors[0].PerUserCredential() != "oauth_access_token" {
			t.Errorf("%s: %+v", provider, app)
		}
	}
	if params := legateconfig.ProviderOf("email", "gmail").Params; params["access_type"] != "offline" {
		t.Errorf("gmail's consent asks no refresh token: %v", params)
	}
	for typ, provider := range map[string]string{"email": "yahoo", "github": "gmail"} {
		if _, err := parse(typ, provider); err == nil || !strings.Contains(err.Error(), "oauth.provider") {
			t.Errorf("%s with provider %s: %v", typ, provider, err)
		}
	}
}
