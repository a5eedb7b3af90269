package main

import (
	"strings"
	"testing"
)

// `legate connect ID --token` stores a person's own token for a per-user
// instance without an OAuth app (added with --user-credential), read from
// standard input and never printed; `legate connections list` shows the
// connection as a token's, and revoke forgets it.
func TestConnectWithOwnToken(t *testing.T) {
	cfg := writeConfig(t, "principal: alice\n")
	flags := []string{"--config", cfg, "--state-dir", t.TempDir()}
	run := func(stdin string, args ...string) (string, error) {
		return legateIn(t, stdin, append(args, flags...)...)
	}
	if out, err := run("", "connector", "add", "gh", "--type", "github", "--set", "base_url=http://127.0.0.1:1/", "--set", "allow_private_networks=true",
		"--credentials-mode", "per_user", "--user-credential", "tokn"); err == nil || !strings.Contains(err.Error(), `takes no credential "tokn"`) {
		t.Fatalf("an unknown user credential: %v\n%s", err, out)
	}
	if out, err := run("", "connector", "add", "gh", "--type", "github", "--set", "base_url=http://127.0.0.1:1/", "--set", "allow_private_networks=true",
		"--credentials-mode", "per_user", "--user-credential", "token"); err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	if out, err := run("", "connector", "show", "gh"); err != nil || !strings.Contains(out, "USER CREDENTIAL:   token") {
		t.Fatalf("show: %v\n%s", err, out)
	}
	if out, err := run("", "connect", "gh", "--token"); err == nil || !strings.Contains(err.Error(), "no value on standard input") || !strings.Contains(err.Error(), "legate connect INSTANCE") {
		t.Fatalf("connect --token with nothing on stdin: %v\n%s", err, out)
	}
	out, err := run("ghp_cli_own_token\n", "connect", "gh", "--token")
	if err != nil || !strings.Contains(out, "connected: gh for alice") || strings.Contains(out, "ghp_cli_own_token") {
		t.Fatalf("connect --token: %v\n%s", err, out)
	}
	out, err = run("", "connections", "list")
	if err != nil || !strings.Contains(out, "gh") || !strings.Contains(out, "connected") || !strings.Contains(out, "token") || strings.Contains(out, "ghp_cli_own_token") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if out, err := run("", "connections", "revoke", "gh"); err != nil {
		t.Fatalf("revoke: %v\n%s", err, out)
	}
	if out, err := run("", "connections", "list"); err != nil || strings.Contains(out, "alice") {
		t.Fatalf("list after revoke: %v\n%s", err, out)
	}
}
