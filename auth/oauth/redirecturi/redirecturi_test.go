package redirecturi_test

import (
	"strings"
	"testing"

	"github.com/legate-mcp/legate/auth/oauth/redirecturi"
)

// TestCheckRedirectURI: https with a host, loopback http named exactly
// and a private-use scheme in reverse-DNS form are accepted; every other
// scheme, a fragment, a user name or an overlong URI is refused.
func TestCheckRedirectURI(t *testing.T) {
	for _, u := range []string{"https://client.example/cb", "http://127.0.0.1:33418/cb", "http://[::1]:8080/cb", "http://localhost/cb",
		"com.example.app:/oauth2redirect", "cursor://anysphere.cursor-mcp/oauth/callback"} {
		if msg := redirecturi.Check(u); msg != "" {
			t.Errorf("%s refused: %s", u, msg)
		}
	}
	for _, u := range []string{"", "/cb", "https:///cb", "https://client.example/cb#x", "https://user@client.example/cb",
		"http://client.example/cb", "http://127.0.0.1.evil.example/cb", "javascript:alert(1)", "data:text/html,x", "ms-msdt:/x",
		"search-ms:query=x", "com.example.app:opaque", "myapp:/cb", "https://client.example/" + strings.Repeat("a", redirecturi.MaxLen)} {
		if redirecturi.Check(u) == "" {
			t.Errorf("%q accepted", u)
		}
	}
}

// TestRegisteredRedirectURI: a redirect URI is the registered one when
// it is the same string, or loopback http on another port (RFC 8252
// §7.3); never another host, path or query.
func TestRegisteredRedirectURI(t *testing.T) {
	reg := []string{"https://client.example/cb", "http://127.0.0.1:33418/callback"}
	for uri, want := range map[string]bool{
		"https://client.example/cb":          true,
		"https://client.example/cb/x":        false,
		"https://client.example:8443/cb":     false,
		"http://127.0.0.1:33418/callback":    true,
		"http://127.0.0.1:5000/callback":     true,
		"http://127.0.0.1/callback":          true,
		"http://localhost:33418/callback":    false,
		"http://127.0.0.1:5000/other":        false,
		"http://127.0.0.1:5000/callback?x=1": false,
		"http://127.0.0.1:5000/callback#x":   false,
		"http://u@127.0.0.1:5000/callback":   false,
	} {
		if got := redirecturi.Registered(reg, uri); got != want {
			t.Errorf("Registered(%s) = %v, want %v", uri, got, want)
		}
	}
}
