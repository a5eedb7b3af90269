// Package redirecturi holds the rules of the redirect URIs Legate's
// authorization server registers and sends browsers to (RFC 8252): which
// URIs a client may register, and when a redirect_uri is one it
// registered.
package redirecturi

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// MaxLen bounds the length of a redirect URI.
const MaxLen = 2000

// appSchemes are the private-use schemes of MCP clients that predate
// the reverse-DNS rule (RFC 8252 §7.1) and are accepted by name.
var appSchemes = []string{"cursor"}

// privateSchemeRE is a private-use scheme in reverse-DNS form: at least
// two labels, lower case (com.example.app).
var privateSchemeRE = regexp.MustCompile(`^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+$`)

// Check says why s may not be registered as a redirect URI, or "" when
// it may. It accepts, and only accepts, https with a host, http to a
// loopback address named exactly (RFC 8252 §7.3) and a native app's
// private-use scheme in reverse-DNS form (§7.1); never a fragment or a
// user name. Every other scheme (javascript:, data:, ms-msdt:,
// search-ms:, jar:, view-source:…) is refused by construction.
func Check(s string) string {
	if len(s) > MaxLen {
		return fmt.Sprintf("longer than %d characters", MaxLen)
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Scheme == "":
		return "not an absolute URI"
	case strings.Contains(s, "#"):
		return "must not have a fragment"
	case u.User != nil || strings.Contains(u.Host, "@"):
		return "must not hold a user name or password"
	case u.Scheme == "https":
		if u.Hostname() == "" {
			return "no host"
		}
	case u.Scheme == "http":
		if !IsLoopback(u.Hostname()) {
			return "http is allowed only to 127.0.0.1, [::1] or localhost"
		}
	case privateSchemeRE.MatchString(u.Scheme) || slices.Contains(appSchemes, u.Scheme):
		if u.Opaque != "" {
			return "a private-use scheme's URI needs a path (com.example.app:/callback)"
		}
	default:
		return fmt.Sprintf("the %s scheme is not allowed: use https, http to a loopback address, or a private-use scheme in reverse-DNS form (com.example.app:/callback)", u.Scheme)
	}
	return ""
}

// IsLoopback reports whether host, a URL's hostname, names the loopback
// interface exactly: 127.0.0.1, ::1 or localhost (not a name that merely
// begins with 127.).
func IsLoopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// Registered reports whether uri is one of the redirect URIs a client
// registered: the same string, or, for http to a loopback address, the
// same but for the port, which a native app picks when it starts (RFC
// 8252 §7.3).
func Registered(registered []string, uri string) bool {
	if slices.Contains(registered, uri) {
		return true
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "http" || !IsLoopback(u.Hostname()) || u.User != nil || strings.Contains(uri, "#") {
		return false
	}
	for _, reg := range registered {
		r, err := url.Parse(reg)
		if err == nil && r.Scheme == "http" && r.Hostname() == u.Hostname() && r.EscapedPath() == u.EscapedPath() && r.RawQuery == u.RawQuery {
			return true
		}
	}
	return false
}
