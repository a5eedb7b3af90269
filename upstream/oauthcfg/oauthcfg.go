// Package oauthcfg is the configuration of an OAuth-protected upstream
// (auth: oauth) and its checks; package mcpauth runs its authorization.
package oauthcfg

import (
	"net/http"
	"slices"

	"github.com/legate-mcp/legate/vault"
)

// Auth is auth: oauth.
const Auth = "oauth"

// Client is a configured client of an OAuth-protected upstream's
// authorization server.
type Client struct {
	ClientID     string     `yaml:"client_id" json:"client_id" required:"true" desc:"Client id registered with the upstream's authorization server"`
	ClientSecret *vault.Ref `yaml:"client_secret" json:"client_secret,omitempty" desc:"Its secret, as a reference: {env: NAME}, {file: PATH} or {vault: NAME} (none for a public client)"`
	Scopes       []string   `yaml:"scopes" json:"scopes,omitempty" desc:"Scopes asked for at consent (default: the server's scopes_supported)"`
}

// Upstream is what the checks read of an upstream's configuration.
type Upstream struct {
	Auth, URL, Transport string
	PerClient            bool // session: per_client
	HeaderEnv            map[string]string
	Client               *Client
	ListBeforeConnect    bool
}

// Validate reports through bad (key relative to the upstream) what is
// wrong with u's auth, oauth and list_before_connect.
func Validate(u Upstream, bad func(key, format string, args ...any)) {
	switch {
	case !slices.Contains([]string{"", "none", Auth}, u.Auth):
		bad("auth", "must be none or oauth, not %q", u.Auth)
	case u.Auth != Auth:
		if u.Client != nil {
			bad("oauth", "applies with auth: oauth only")
		}
		if u.ListBeforeConnect {
			bad("list_before_connect", "applies with auth: oauth only")
		}
		return
	case u.URL == "":
		bad("auth", "oauth applies to url upstreams only")
	case u.Transport == "sse":
		bad("transport", "an upstream with auth: oauth speaks Streamable HTTP, not sse")
	case u.PerClient:
		bad("session", "an upstream with auth: oauth has a session per principal: per_client does not apply")
	}
	for h := range u.HeaderEnv {
		if http.CanonicalHeaderKey(h) == "Authorization" {
			bad("header_env."+h, "with auth: oauth, the Authorization header is each caller's token")
		}
	}
	if u.Client == nil {
		return
	}
	if u.Client.ClientID == "" {
		bad("oauth.client_id", "is required")
	}
	if u.Client.ClientSecret != nil {
		if err := u.Client.ClientSecret.Validate(); err != nil {
			bad("oauth.client_secret", "%v", err)
		}
	}
}
