package config

import (
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/internal/strictyaml"
	"github.com/legate-mcp/legate/vault"
)

// The credential modes of a connector instance (credentials_mode).
const (
	CredentialsShared          = "shared"
	CredentialsPerUser         = "per_user"
	CredentialsPerUserOrShared = "per_user_or_shared"
)

// ConnectorOAuth is a connector instance's `oauth:` section: the OAuth app
// the operator registered with the provider, through which each person
// connects their own account.
type ConnectorOAuth struct {
	ClientID     string     `yaml:"client_id" json:"client_id" required:"true" desc:"Client id of the OAuth app registered with the provider"`
	ClientSecret *vault.Ref `yaml:"client_secret" json:"client_secret,omitempty" desc:"Client secret of the OAuth app, as a reference: {env: NAME}, {file: PATH} or {vault: NAME} (none for a public client)"`
	Scopes       []string   `yaml:"scopes" json:"scopes,omitempty" desc:"Scopes asked for at consent (for slack, the person's user scopes: Slack's user_scope)" example:"[channels:read, channels:history, chat:write]"`
	AuthorizeURL string     `yaml:"authorize_url" json:"authorize_url,omitempty" desc:"The provider's authorization endpoint (default: the provider's, for slack, github, notion and google)"`
	TokenURL     string     `yaml:"token_url" json:"token_url,omitempty" desc:"The provider's token endpoint (default: the provider's)"`
	RevokeURL    string     `yaml:"revoke_url" json:"revoke_url,omitempty" desc:"The provider's token revocation endpoint, called when a connection is revoked (default: the provider's; none: tokens are only forgotten)"`
	RedirectURL  string     `yaml:"redirect_url" json:"redirect_url,omitempty" example:"https://legate.example.com/connect/callback" desc:"Legate's callback URL as registered with the app (default: the origin of auth.resource, then the address a connect request came to, + /connect/callback)"`
	Credential   string     `yaml:"credential" json:"credential,omitempty" desc:"The instance's credential a connection supplies (default: user_token for slack, token for github and notion, refresh_token for google, oauth_access_token for email)"`
	Provider     string     `yaml:"provider" json:"provider,omitempty" desc:"For type email, which has no single provider: gmail or microsoft, whose endpoints and mail scopes are then the defaults"`
}

// ProviderOAuth are a provider's OAuth endpoints and the credential a
// connection supplies to its connector type.
type ProviderOAuth struct {
	AuthorizeURL, TokenURL, RevokeURL string
	// Credential is the type's credential a connection supplies;
	// RefreshToken says it is the refresh token (the connector exchanges it
	// itself), else the access token.
	Credential   string
	RefreshToken bool
	// Params are extra parameters of the authorization request.
	Params map[string]string
	// UserScopes names the authorization request's parameter the scopes
	// go in instead of scope ("user_scope" for Slack, whose scope is the
	// bot's): comma-separated there.
	UserScopes string
	// TokenField names the object of the token response that holds the
	// token a connection keeps, in place of the top-level one ("authed_user"
	// for Slack, whose top-level token is the bot's).
	TokenField string
	// Scopes are the scopes asked for when the oauth section names none.
	Scopes []string
}

// Providers are the OAuth defaults of the connector types that support
// per-user connections.
var Providers = map[string]ProviderOAuth{
	"slack": {AuthorizeURL: "https://slack.com/oauth/v2/authorize", TokenURL: "https://slack.com/api/oauth.v2.access", RevokeURL: "https://slack.com/api/auth.revoke", Credential: "user_token",
		UserScopes: "user_scope", TokenField: "authed_user"},
	"github": {AuthorizeURL: "https://github.com/login/oauth/authorize", TokenURL: "https://github.com/login/oauth/access_token", Credential: "token"},
	"notion": {AuthorizeURL: "https://api.notion.com/v1/oauth/authorize", TokenURL: "https://api.notion.com/v1/oauth/token", RevokeURL: "https://api.notion.com/v1/oauth/revoke", Credential: "token", Params: map[string]string{"owner": "user"}},
	"google": {AuthorizeURL: "https://accounts.google.com/o/oauth2/v2/auth", TokenURL: "https://oauth2.googleapis.com/token", RevokeURL: "https://oauth2.googleapis.com/revoke", Credential: "refresh_token", RefreshToken: true,
		Params: map[string]string{"access_type": "offline", "prompt": "consent"}},
	// email has no endpoints of its own: the oauth section gives them, or
	// names one of MailProviders.
	"email": {Credential: "oauth_access_token"},
}

// MailProviders are the mail providers an email instance's oauth section
// may name (provider): their endpoints and the scopes IMAP and SMTP need.
var MailProviders = map[string]ProviderOAuth{
	"gmail": {AuthorizeURL: "https://accounts.google.com/o/oauth2/v2/auth", TokenURL: "https://oauth2.googleapis.com/token", RevokeURL: "https://oauth2.googleapis.com/revoke",
		Params: map[string]string{"access_type": "offline", "prompt": "consent"}, Scopes: []string{"https://mail.google.com/"}},
	"microsoft": {AuthorizeURL: "https://login.microsoftonline.com/common/oauth2/v2.0/authorize", TokenURL: "https://login.microsoftonline.com/common/oauth2/v2.0/token",
		Scopes: []string{"https://outlook.office.com/IMAP.AccessAsUser.All", "https://outlook.office.com/SMTP.Send", "offline_access"}},
}

// ProviderOf is the OAuth defaults of type typ, with those of the mail
// provider named (an email instance's oauth.provider) over them.
func ProviderOf(typ, provider string) ProviderOAuth {
	def := Providers[typ]
	if mp, ok := MailProviders[provider]; ok && typ == "email" {
		mp.Credential, mp.RefreshToken = def.Credential, def.RefreshToken
		return mp
	}
	return def
}

// PerUser reports whether the instance's calls use the caller's own
// connection (per_user or per_user_or_shared).
func (c *Connector) PerUser() bool {
	return c.CredentialsMode == CredentialsPerUser || c.CredentialsMode == CredentialsPerUserOrShared
}

// PerUserCredential is the credential a per-user connection supplies, ""
// when the instance's mode is shared: the OAuth app's, or without one
// the credential people supply themselves (user_credential).
func (c *Connector) PerUserCredential() string {
	switch {
	case !c.PerUser():
		return ""
	case c.OAuth == nil:
		return c.UserCredential
	case c.OAuth.Credential != "":
		return c.OAuth.Credential
	}
	return Providers[c.Type].Credential
}

// OAuthApp is the instance's OAuth app with the provider's defaults
// applied; nil without an oauth section.
func (c *Connector) OAuthApp() *ConnectorOAuth {
	if c.OAuth == nil {
		return nil
	}
	app := *c.OAuth
	def := ProviderOf(c.Type, app.Provider)
	if len(app.Scopes) == 0 {
		app.Scopes = def.Scopes
	}
	if app.AuthorizeURL == "" {
		app.AuthorizeURL = def.AuthorizeURL
	}
	if app.TokenURL == "" {
		app.TokenURL = def.TokenURL
	}
	if app.RevokeURL == "" {
		app.RevokeURL = def.RevokeURL
	}
	if app.Credential == "" {
		app.Credential = def.Credential
	}
	return &app
}

// ValidateOAuth checks the instance's credentials_mode and oauth section,
// the provider's defaults applied; errors start with path.
func (c *Connector) ValidateOAuth(path string) []error {
	var errs []error
	bad := func(p, format string, args ...any) {
		errs = append(errs, &strictyaml.PathError{Path: p, Msg: fmt.Sprintf(format, args...)})
	}
	// Connector validates itself (stored instances are checked apart from
	// a file): its own tags are checked here, its type's config when built.
	for _, err := range strictyaml.Check(c, path, func(t reflect.Type) bool { return t == reflect.TypeFor[yaml.Node]() }) {
		if pe, ok := err.(*strictyaml.PathError); !ok || pe.Path != path+".type" { // ValidateInstance names the types
			errs = append(errs, err)
		}
	}
	if c.PerUser() && c.OAuth == nil && c.UserCredential == "" {
		bad(path+".oauth", "is required with credentials_mode %s: the OAuth app people connect with (or user_credential: the credential each person supplies with legate connect %s --token)", c.CredentialsMode, c.id())
	}
	if u := c.UserCredential; u != "" {
		t, known := connectors.Lookup(c.Type)
		switch {
		case !c.PerUser():
			bad(path+".user_credential", "is for credentials_mode per_user or per_user_or_shared, not %s", c.CredentialsMode)
		case c.OAuth != nil:
			bad(path+".user_credential", "is for an instance without oauth: with oauth, a connection supplies oauth.credential")
		case known && !t.HasCredential(u):
			bad(path+".user_credential", "type %q takes no credential %q (it takes: %s)", c.Type, u, strings.Join(t.CredentialNames(), ", "))
		}
	}
	app := c.OAuthApp()
	if app == nil {
		return errs
	}
	p := path + ".oauth"
	if _, ok := MailProviders[app.Provider]; app.Provider != "" && (!ok || c.Type != "email") {
		bad(p+".provider", "is for type email only, gmail or microsoft; got %q", app.Provider)
	}
	for _, u := range []struct{ key, v string }{{"authorize_url", app.AuthorizeURL}, {"token_url", app.TokenURL}, {"revoke_url", app.RevokeURL}, {"redirect_url", app.RedirectURL}} {
		if u.v == "" {
			if u.key == "authorize_url" || u.key == "token_url" {
				bad(p+"."+u.key, "is required: type %q has no default (defaults exist for %s, and for email with provider gmail or microsoft)", c.Type, strings.Join(providerNames(), ", "))
			}
			continue
		}
		if pu, err := url.Parse(u.v); err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" {
			bad(p+"."+u.key, "%q is not an http(s) URL", u.v)
		}
	}
	if t, ok := connectors.Lookup(c.Type); ok && app.Credential != "" && !t.HasCredential(app.Credential) {
		bad(p+".credential", "type %q takes no credential %q (it takes: %s)", c.Type, app.Credential, strings.Join(t.CredentialNames(), ", "))
	} else if app.Credential == "" {
		bad(p+".credential", "is required: type %q has no default", c.Type)
	}
	if app.ClientSecret != nil {
		if err := app.ClientSecret.Validate(); err != nil {
			bad(p+".client_secret", "%v", err)
		}
	}
	return errs
}

func providerNames() []string {
	var out []string
	for n, p := range Providers {
		if p.AuthorizeURL != "" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// PerUserUnhardened is the warning a deployment with per-user instances
// and without auth.hardened deserves, "" when it has none or is hardened:
// without pins every admin credential may change the instances people
// connect their own accounts to (their OAuth app, base URL, upstreams), so
// a changed instance could send those accounts' calls and tokens elsewhere.
func (f *File) PerUserUnhardened() string {
	if f.Auth.Hardened {
		return ""
	}
	var ids []string
	for _, c := range f.Connectors {
		if c.PerUser() {
			ids = append(ids, c.id())
		}
	}
	if len(ids) == 0 {
		return ""
	}
	return fmt.Sprintf("connectors %s take per-user credentials but auth.hardened is off: any admin credential may change the instances people connect their own accounts to; set auth.hardened: true with the operators in auth.pins (docs/auth.md)", strings.Join(ids, ", "))
}
