package auth

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// CheckListen decides whether `legate serve` may listen on listen: a
// loopback address may go without authentication; any other address needs
// it, unless allowUnauthenticated, which returns a warning to log.
func CheckListen(listen string, authEnabled, allowUnauthenticated bool) (warning string, err error) {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("listen %q: want host:port", listen)
	}
	if authEnabled || IsLoopbackHost(host) {
		return "", nil
	}
	if allowUnauthenticated {
		return fmt.Sprintf("listening on %s without authentication (auth.allow_unauthenticated): anyone who can reach it can call every tool", listen), nil
	}
	return "", fmt.Errorf("refusing to listen on %s without authentication: turn on auth (auth.tokens: true with `legate token create`, or auth.oauth), listen on a loopback address, or set auth.allow_unauthenticated: true (serve --allow-unauthenticated)", listen)
}

// IsLoopbackHost reports whether host (a name or an IP address, without a
// port) is a loopback host: "localhost" or a loopback IP.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Guard refuses requests whose Host or Origin are not the listener's,
// against DNS rebinding and cross-site requests from browsers: on a
// loopback listener only loopback host names are accepted as Host (else
// any, unless hosts lists some); every Origin header, when present, must
// be a loopback origin (on loopback), one of origins, or one ownForm
// accepts (a form of the listener's own, checked by its handler). "null"
// passes only when origins lists it.
func Guard(listen string, hosts, origins []string, ownForm func(r *http.Request, origin string) bool, next http.Handler) http.Handler {
	loopback := isLoopbackListen(listen)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := hostOnly(r.Host)
		hostOK := slices.Contains(hosts, r.Host) || slices.Contains(hosts, host) ||
			(loopback && IsLoopbackHost(host)) || (!loopback && len(hosts) == 0)
		if !hostOK {
			http.Error(w, fmt.Sprintf("forbidden: Host %q is not accepted here (add it to allowed_hosts)", r.Host), http.StatusForbidden)
			return
		}
		// A browser sends one Origin; a request with more is checked on
		// each, so a good first one cannot carry a bad second.
		for _, origin := range r.Header.Values("Origin") {
			if !slices.Contains(origins, origin) && !(loopback && isLoopbackOrigin(origin)) && !(ownForm != nil && ownForm(r, origin)) {
				http.Error(w, fmt.Sprintf("forbidden: Origin %q is not allowed (add it to allowed_origins)", origin), http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopbackOrigin reports whether origin is a serialized origin
// (scheme://host[:port], nothing more) of a loopback host.
func isLoopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.User == nil &&
		u.Path == "" && u.RawQuery == "" && u.Fragment == "" && !strings.Contains(origin, "#") &&
		IsLoopbackHost(u.Hostname())
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func isLoopbackListen(listen string) bool {
	host := hostOnly(listen)
	return host != "" && IsLoopbackHost(host)
}
