package config

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/internal/strictyaml"
)

// Auth is the `auth:` section: who may call /mcp. Authentication is on
// when resource or oauth is set or tokens is true; without it, Legate
// serves only a loopback address unless allow_unauthenticated is true.
type Auth struct {
	Resource string `yaml:"resource" example:"https://legate.example.com/mcp" desc:"Legate's own public URL of /mcp: the audience OAuth access tokens must name and the resource of the RFC 9728 metadata; required with oauth"`
	// Tokens has no default tag: setting it would turn authentication on.
	Tokens               *bool        `yaml:"tokens" desc:"Accept the static tokens made by legate token create (default true once authentication is on); true alone turns authentication on"`
	OAuth                *OAuth       `yaml:"oauth" desc:"Accept JWT access tokens signed by an identity provider's keys (Legate as an OAuth resource server)"`
	OAuthServer          *OAuthServer `yaml:"oauth_server" desc:"Be the OAuth 2.1 authorization server of /mcp: clients register themselves, people log in with the accounts of legate user add"`
	AllowUnauthenticated bool         `yaml:"allow_unauthenticated" default:"false" desc:"Let legate serve listen beyond loopback with authentication off: anyone who can reach it can call every tool"`
	Hardened             bool         `yaml:"hardened" default:"false" desc:"Close every change of the deployment (connectors, upstreams, vault, tokens, users) to the principals in pins; with no pin nobody may change it"`
	Pins                 []string     `yaml:"pins" desc:"With hardened: the principals (token or user names) allowed to change the deployment"`
}

// Pinned reports whether principal may change the deployment: always
// when not hardened, else only when it is one of pins.
func (a *Auth) Pinned(principal string) bool {
	if !a.Hardened {
		return true
	}
	for _, p := range a.Pins {
		if p == principal && p != "" {
			return true
		}
	}
	return false
}

// OAuth is the `auth.oauth:` section.
type OAuth struct {
	Issuer      string          `yaml:"issuer" required:"true" example:"https://idp.example.com/" desc:"The authorization server's issuer identifier; a token's iss claim must equal it"`
	JWKSURL     string          `yaml:"jwks_url" required:"true" example:"https://idp.example.com/.well-known/jwks.json" desc:"Where the issuer publishes its signing keys (https, or http to a loopback address)"`
	JWKSRefresh legate.Duration `yaml:"jwks_refresh" default:"15m" min:"0" desc:"How often the keys are fetched again; a token naming an unknown key id fetches them at once (at most once a second), so a rotated key works without waiting"`
	// AuthorizationServers defaults to [issuer], applied by ApplyDefaults.
	AuthorizationServers []string `yaml:"authorization_servers" desc:"Authorization servers listed in the metadata document clients discover (default: the issuer)"`
	Claims               Claims   `yaml:"claims" desc:"The token claims a caller's identity is read from"`
}

// OAuthServer is the `auth.oauth_server:` section: Legate's own
// authorization server, whose issuer is the origin of auth.resource.
type OAuthServer struct {
	AccessTokenTTL  legate.Duration `yaml:"access_token_ttl" default:"10m" min:"0" desc:"Lifetime of an access token; clients renew it with their refresh token"`
	RefreshTokenTTL legate.Duration `yaml:"refresh_token_ttl" default:"720h" min:"0" desc:"Lifetime of a refresh token; each use replaces it with a new one of this lifetime"`
	MaxClients      int             `yaml:"max_clients" default:"1000" min:"1" desc:"Most clients registered at once; when full, clients that obtained no token within ten minutes of registering make room, else registration is refused"`
	UnusedClientTTL legate.Duration `yaml:"unused_client_ttl" default:"24h" min:"0" desc:"A registered client that has obtained no token this long after registering is deleted"`
	Upstream        *UpstreamLogin  `yaml:"upstream" desc:"Let people log in with an OpenID Connect provider (SSO) besides the local accounts"`
}

// UpstreamLogin is the `auth.oauth_server.upstream:` section: an OpenID
// Connect provider people log in with. Its redirect URI is the issuer of
// Legate's authorization server followed by /oauth/upstream/callback.
type UpstreamLogin struct {
	Name            string `yaml:"name" default:"single sign-on" desc:"The provider's name on the login page's button"`
	Issuer          string `yaml:"issuer" required:"true" example:"https://idp.example.com/" desc:"The provider's issuer; its discovery document is read from it"`
	ClientID        string `yaml:"client_id" required:"true" desc:"Legate's client id at the provider"`
	ClientSecretEnv string `yaml:"client_secret_env" example:"LEGATE_SSO_SECRET" desc:"Name of the environment variable holding Legate's client secret at the provider (none: a public client with PKCE)"`
	Claims          Claims `yaml:"claims" desc:"The ID token claims a person's identity is read from, as for JWT access tokens"`
}

// Claims names the JWT claims mapped to a principal. A name with dots
// that is not a claim itself is a path into nested objects
// (realm_access.roles).
type Claims struct {
	Principal string `yaml:"principal" default:"sub" desc:"Claim holding the caller's name; a token without it is refused"`
	Tenant    string `yaml:"tenant" default:"tenant" desc:"Claim holding the caller's tenant (absent: none)"`
	Role      string `yaml:"role" default:"role" desc:"Claim holding user, approver or admin, or a list of them, the highest counting (absent or none of those: user)"`
	Profile   string `yaml:"profile" default:"profile" desc:"Claim holding the caller's profile (absent: none)"`
}

// Enabled reports whether callers must authenticate.
func (a *Auth) Enabled() bool {
	return a.Resource != "" || a.OAuth != nil || a.OAuthServer != nil || a.Tokens != nil && *a.Tokens
}

// TokensEnabled reports whether static tokens are accepted.
func (a *Auth) TokensEnabled() bool {
	return a.Enabled() && (a.Tokens == nil || *a.Tokens)
}

// Validate checks the section without I/O, against its spec and across
// its keys; path is its key path. The server checks the section with it
// too.
func (a *Auth) Validate(path string) []error {
	errs := strictyaml.Check(a, path, nil)
	bad := func(p, format string, args ...any) {
		errs = append(errs, &strictyaml.PathError{Path: path + "." + p, Msg: fmt.Sprintf(format, args...)})
	}
	if a.Resource != "" {
		if msg := checkURL(a.Resource, false); msg != "" {
			bad("resource", "%s", msg)
		}
	}
	if a.OAuthServer != nil {
		if a.Resource == "" {
			bad("resource", "is required with oauth_server: its origin is the issuer, and the audience of the tokens issued")
		}
		o := a.OAuthServer
		if u := o.Upstream; u != nil {
			if msg := checkURL(u.Issuer, true); u.Issuer != "" && msg != "" {
				bad("oauth_server.upstream.issuer", "%s", msg)
			}
		}
		for _, d := range []struct {
			key      string
			v, least legate.Duration
		}{{"access_token_ttl", o.AccessTokenTTL, legate.Duration(time.Minute)}, {"refresh_token_ttl", o.RefreshTokenTTL, legate.Duration(time.Hour)}, {"unused_client_ttl", o.UnusedClientTTL, legate.Duration(time.Minute)}} {
			if d.v != 0 && d.v < d.least {
				bad("oauth_server."+d.key, "must be at least %s", time.Duration(d.least))
			}
		}
	}
	if a.Enabled() && !a.TokensEnabled() && a.OAuth == nil && a.OAuthServer == nil {
		bad("tokens", "is false and oauth is not set: nobody could authenticate")
	}
	if o := a.OAuth; o != nil {
		if a.Resource == "" {
			bad("resource", "is required with oauth: it is the audience access tokens must name")
		}
		// An empty issuer or jwks_url is reported by the spec's required.
		if msg := checkURL(o.Issuer, false); o.Issuer != "" && msg != "" {
			bad("oauth.issuer", "%s", msg)
		}
		if msg := checkURL(o.JWKSURL, true); o.JWKSURL != "" && msg != "" {
			bad("oauth.jwks_url", "%s", msg)
		}
		for i, s := range o.AuthorizationServers {
			if msg := checkURL(s, false); msg != "" {
				bad(fmt.Sprintf("oauth.authorization_servers[%d]", i), "%s", msg)
			}
		}
		for _, c := range [][2]string{{"principal", o.Claims.Principal}, {"tenant", o.Claims.Tenant}, {"role", o.Claims.Role}, {"profile", o.Claims.Profile}} {
			if strings.TrimSpace(c[1]) != c[1] {
				bad("oauth.claims."+c[0], "must not begin or end with spaces")
			}
		}
	}
	return errs
}

// checkURL checks an absolute http(s) URL without a fragment; with
// fetched, plain http is allowed only to a loopback address, since keys
// fetched over it could be replaced on the way.
func checkURL(s string, fetched bool) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "is not a URL"
	case u.User != nil:
		return fmt.Sprintf("%q must not hold a user name or password", u.Redacted())
	case u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return fmt.Sprintf("%q is not an absolute http(s) URL", s)
	case u.Fragment != "" || strings.Contains(s, "#"):
		return fmt.Sprintf("%q must not have a fragment", s)
	case fetched && u.Scheme == "http" && !loopbackHost(u.Hostname()):
		return fmt.Sprintf("%q must use https (http only to a loopback address)", s)
	}
	return ""
}

func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
