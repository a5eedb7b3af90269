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
		"address in use":               {busy.Addr().String(), "address already in use"},
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

// A port in use says what is most likely on it and how to choose another.
func TestServeOnAPortInUseSaysWhatToDo(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	_, err = runCLI(t, "serve", "--listen", addr, "--state-dir", t.TempDir())
	want := "listen " + addr + ": address already in use — is Legate already running? (legate status) Or choose another address with --listen or listen: in the config"
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
}

// A config that loads but fails when the gateway is built (here a
// connector whose settings its type refuses) leaves the state directory
// as it found it: no database, no vault key.
func TestServeWithABadConfigLeavesNoState(t *testing.T) {
	cfg := writeConfig(t, "log_level: error\nconnectors:\n  - type: webhook\n    config: {url: ftp://hooks.example.com/in}\n")
	empty := t.TempDir()
	for name, state := range map[string]string{"missing": filepath.Join(t.TempDir(), "state"), "empty": empty} {
		t.Run(name, func(t *testing.T) {
			_, err := runCLI(t, "serve", "--config", cfg, "--listen", "127.0.0.1:0", "--state-dir", state)
			if err == nil || !strings.Contains(err.Error(), "connectors[0]") {
				t.Fatalf("serve with a bad connector: %v", err)
			}
			entries, err := os.ReadDir(state)
			switch {
			case state == empty && err != nil:
				t.Fatalf("the state dir that was there is gone: %v", err)
			case state != empty && !os.IsNotExist(err):
				t.Fatalf("the state dir was made: %v, holding %v", err, entries)
			case len(entries) > 0:
				t.Fatalf("the state dir holds %v", entries)
			}
		})
	}
}
