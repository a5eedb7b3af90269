package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// legate init writes a config that `config validate` accepts, with the
// choices its flags make; it never overwrites a file unless told to, and
// refuses flags that would make an invalid config.
func TestInit(t *testing.T) {
	cases := map[string]struct {
		args []string
		want []string // in the file
	}{
		"defaults":  {nil, []string{"listen: 127.0.0.1:8080", "# auth:", "upstreams: []"}},
		"auth":      {[]string{"--auth", "--listen", "0.0.0.0:9090"}, []string{"listen: 0.0.0.0:9090", "auth:\n  tokens: true"}},
		"upstreams": {[]string{"--upstream", "gh=https://mcp.example.com/mcp", "--upstream", "local=http://127.0.0.1:3000/mcp"}, []string{"  - id: gh\n    url: https://mcp.example.com/mcp", "  - id: local"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			if out, err := runCLI(t, append([]string{"init", "-o", path}, c.args...)...); err != nil {
				t.Fatalf("init: %v\n%s", err, out)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("config lacks %q:\n%s", w, b)
				}
			}
			if out, err := runCLI(t, "config", "validate", "--config", path); err != nil || !strings.Contains(out, "valid") {
				t.Fatalf("config validate: %v\n%s\n%s", err, out, b)
			}
		})
	}

	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("listen: 127.0.0.1:1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "init", "-o", path); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("init over an existing file: %v, want a refusal naming --force", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "listen: 127.0.0.1:1\n" {
		t.Errorf("the existing file changed: %q", b)
	}
	if _, err := runCLI(t, "init", "-o", path, "--force"); err != nil {
		t.Errorf("init --force: %v", err)
	}
	for _, bad := range [][]string{{"--upstream", "nourl"}, {"--upstream", "Bad.ID=http://127.0.0.1:1/mcp"}, {"--listen", "127.0.0.1:99999"}} {
		out := filepath.Join(t.TempDir(), "config.yaml")
		if _, err := runCLI(t, append([]string{"init", "-o", out}, bad...)...); err == nil {
			t.Errorf("init %v: no error", bad)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("init %v wrote a file", bad)
		}
	}
}
