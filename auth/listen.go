package auth

import (
	"fmt"
	"net"
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
