package config

import (
	"fmt"
	"github.com/legate-mcp/legate"
	"net"
	"net/url"
	"strings"

	"github.com/legate-mcp/legate/internal/strictyaml"
)

// Auth is the `auth:` section: who may call /mcp. Authentication is on
// when resource or oauth is set or tokens is true; without it, Legate
// serves only a loopback address unless allow_unauthenticated is true.
type Auth struct {
	// Resource is Legate's own public URL of /mcp
	// (https://legate.example.com/mcp): the audience OAuth access tokens
	// must name and the resource of the RFC 9728 metadata document.
	// Required with oauth.
	Resource string `yaml:"resource"`
	// Tokens accepts the static tokens made by `legate token create`
	// (default true once authentication is on).
	Tokens *bool `yaml:"tokens"`
	// OAuth makes Legate an OAuth resource server: it accepts JWT access
	// tokens signed by the issuer's keys.
	OAuth *OAuth `yaml:"oauth"`
	// AllowUnauthenticated lets `legate serve` listen beyond loopback with
	// authentication off: anyone who can reach it can call every tool.
	AllowUnauthenticated bool `yaml:"allow_unauthenticated"`
}

// OAuth is the `auth.oauth:` section.
type OAuth struct {
	// Issuer is the authorization server's issuer identifier; a token's
	// `iss` claim must equal it.
	Issuer string `yaml:"issuer"`
	// JWKSURL is where the issuer publishes its signing keys (https, or
	// http on a loopback address).
	JWKSURL string `yaml:"jwks_url"`
	// JWKSRefresh is how often the keys are fetched again (default 15m); a
	// token naming an unknown key id fetches them at once (at most once a
	// second), so a rotated key is accepted without waiting for this.
	JWKSRefresh legate.Duration `yaml:"jwks_refresh"`
	// AuthorizationServers are listed in the metadata document clients
	// discover (default: the issuer).
	AuthorizationServers []string `yaml:"authorization_servers"`
	// Claims names the token claims a caller's identity is read from.
	Claims Claims `yaml:"claims"`
}

// Claims names the JWT claims mapped to a principal. A name with dots
// that is not a claim itself is a path into nested objects
// (realm_access.roles).
type Claims struct {
	// Principal is the caller's name (default sub); a token without it is refused.
	Principal string `yaml:"principal"`
	// Tenant is the caller's tenant (default tenant; absent: none).
	Tenant string `yaml:"tenant"`
	// Role is user, approver or admin, or a list holding them, the highest
	// counting (default role; absent or none of those: user).
	Role string `yaml:"role"`
	// Profile is the caller's profile (default profile; absent: none).
	Profile string `yaml:"profile"`
}

// Enabled reports whether callers must authenticate.
func (a *Auth) Enabled() bool {
	return a.Resource != "" || a.OAuth != nil || a.Tokens != nil && *a.Tokens
}

// TokensEnabled reports whether static tokens are accepted.
func (a *Auth) TokensEnabled() bool {
	return a.Enabled() && (a.Tokens == nil || *a.Tokens)
}

// Validate checks the section without I/O; path is its key path.
func (a *Auth) Validate(path string) []error {
	var errs []error
	bad := func(p, format string, args ...any) {
		errs = append(errs, &strictyaml.PathError{Path: path + "." + p, Msg: fmt.Sprintf(format, args...)})
	}
	if a.Resource != "" {
		if msg := checkURL(a.Resource, false); msg != "" {
			bad("resource", "%s", msg)
		}
	}
	if a.Enabled() && !a.TokensEnabled() && a.OAuth == nil {
		bad("tokens", "is false and oauth is not set: nobody could authenticate")
	}
	if o := a.OAuth; o != nil {
		if a.Resource == "" {
			bad("resource", "is required with oauth: it is the audience access tokens must name")
		}
		switch {
		case o.Issuer == "":
			bad("oauth.issuer", "is required")
		case checkURL(o.Issuer, false) != "":
			bad("oauth.issuer", "%s", checkURL(o.Issuer, false))
		}
		switch {
		case o.JWKSURL == "":
			bad("oauth.jwks_url", "is required")
		case checkURL(o.JWKSURL, true) != "":
			bad("oauth.jwks_url", "%s", checkURL(o.JWKSURL, true))
		}
		if o.JWKSRefresh < 0 {
			bad("oauth.jwks_refresh", "must not be negative")
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
