package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A credential that cannot be resolved is named by its reference (never a
// value) in the call's error, for every kind of reference.
func TestUnresolvableCredentialNamesItsReference(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("LEGATE_TEST_UNSET_TOKEN", "")
	cases := map[string]struct{ ref, want string }{
		"env":   {"{env: LEGATE_TEST_UNSET_TOKEN}", "env:LEGATE_TEST_UNSET_TOKEN"},
		"file":  {"{file: " + filepath.Join(dir, "no-such-token") + "}", "file:" + filepath.Join(dir, "no-such-token")},
		"vault": {"{vault: no-such-secret}", "vault:no-such-secret"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "config.yaml")
			doc := "connectors:\n  - id: web\n    type: http\n    config: {base_url: \"http://127.0.0.1:1\", allow_private_networks: true, auth: bearer}\n" +
				"    credentials:\n      token: " + c.ref + "\npolicy:\n  defaults: {read: allow, draft: allow, write: allow, destructive: allow}\n"
			if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			out, _ := runCLI(t, "tools", "call", "web.call", "--args", `{"path": "/"}`, "--config", cfg, "--state-dir", t.TempDir())
			if !strings.Contains(out, "AUTH_EXPIRED") || !strings.Contains(out, c.want) {
				t.Errorf("the error does not name %s:\n%s", c.want, out)
			}
		})
	}
}
