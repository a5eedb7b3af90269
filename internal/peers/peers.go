// Package peers locates the real MCP peers the tests run (npm packages and
// the node that runs them), installed at pinned versions by
// scripts/peers.sh (make peers).
package peers

import (
	"os"
	"path/filepath"
)

// Dir is where scripts/peers.sh installs the peers: $LEGATE_PEERS_DIR,
// else ~/.cache/legate-peers, as the script itself chooses.
func Dir() string {
	if d := os.Getenv("LEGATE_PEERS_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "legate-peers")
	}
	return filepath.Join(home, ".cache", "legate-peers")
}
