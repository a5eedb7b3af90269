package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A serve that refuses to start (an address it may not or cannot listen
// on) makes no state directory, database or key file.
func TestServeThatCannotStartLeavesNoState(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cases := map[string]struct{ listen, want string }{
		"beyond loopback without auth": {"0.0.0.0:0", "authentication"},
		"address in use":               {busy.Addr().String(), "listening on"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state")
			_, err := runCLI(t, "serve", "--listen", c.listen, "--state-dir", state)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("serve --listen %s: %v, want an error about %s", c.listen, err, c.want)
			}
			if _, err := os.Stat(state); !os.IsNotExist(err) {
				t.Errorf("the state dir exists after a refused start: %v", err)
			}
		})
	}
}
