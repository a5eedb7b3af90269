package profiles_test

import (
	"strings"
	"testing"

	"github.com/legate-mcp/legate/profiles"
	"github.com/legate-mcp/legate/upstream"
)

// An upstream without a description is named to clients by its id and how
// it is reached, never by where it is defined, and without a URL's
// credentials or a command's options.
func TestUpstreamDescriptionNamesIDAndTarget(t *testing.T) {
	for name, c := range map[string]struct {
		cfg  upstream.Config
		want string
	}{
		"npx": {upstream.Config{ID: "everything", Command: []string{"npx", "-y", "@modelcontextprotocol/server-everything"}},
			`the MCP server "everything" (stdio: npx -y @modelcontextprotocol/server-everything)`},
		"program path": {upstream.Config{ID: "fs", Command: []string{"/usr/bin/node", "/opt/mcp/fs/index.js", "/srv/data"}},
			`the MCP server "fs" (stdio: node /opt/mcp/fs/index.js /srv/data)`},
		"options cut": {upstream.Config{ID: "k", Command: []string{"server", "run", "--api-key", "sk-123"}},
			`the MCP server "k" (stdio: server run …)`},
		"url": {upstream.Config{ID: "gh", URL: "https://user:pw@api.example.com/mcp/?token=abc#x"},
			`the MCP server "gh" (streamable-http: https://api.example.com/mcp/)`},
		"sse": {upstream.Config{ID: "old", URL: "http://127.0.0.1:9000/sse", Transport: "sse"},
			`the MCP server "old" (sse: http://127.0.0.1:9000/sse)`},
	} {
		got := profiles.UpstreamDescription(&c.cfg)
		if got != c.want {
			t.Errorf("%s: %s, want %s", name, got, c.want)
		}
		for _, secret := range []string{"sk-123", "pw", "token=abc"} {
			if strings.Contains(got, secret) {
				t.Errorf("%s: %s shows %q", name, got, secret)
			}
		}
	}
}
