package main

import (
	"strings"
	"testing"

	"github.com/legate-mcp/legate/cmd/legate/internal/access"
)

// TestHardenedCLI: on a hardened deployment a change needs LEGATE_TOKEN
// of a pinned principal; a non-pinned admin is refused by name.
func TestHardenedCLI(t *testing.T) {
	state := t.TempDir()
	open := writeConfig(t, "auth: {tokens: true}\n")
	hardened := writeConfig(t, "auth: {tokens: true, hardened: true, pins: [alice]}\n")
	nobody := writeConfig(t, "auth: {tokens: true, hardened: true}\n")
	tokens := map[string]string{}
	for _, name := range []string{"alice", "bob"} {
		out, err := runCLI(t, "token", "create", name, "--role", "admin", "--state-dir", state, "--config", open)
		if err != nil {
			t.Fatalf("token create %s: %v\n%s", name, err, out)
		}
		tokens[name] = tokenPattern.FindString(out)
	}
	add := func(config, id, token string) (string, error) {
		t.Setenv(access.TokenEnv, token)
		return runCLI(t, "upstream", "add", id, "--no-refresh", "--url", "http://127.0.0.1:1/mcp", "--state-dir", state, "--config", config)
	}
	// The errors say what LEGATE_TOKEN is, and that the admin token is not it.
	role := "LEGATE_TOKEN is a client's bearer token, made by legate token create, that says who you are; LEGATE_ADMIN_TOKEN, the admin API's token, is another"
	if _, err := add(hardened, "u1", ""); err == nil || !strings.Contains(err.Error(), "set LEGATE_TOKEN") || !strings.Contains(err.Error(), role) {
		t.Fatalf("without a token: %v", err)
	}
	if _, err := add(hardened, "u1", "lgt_not-a-token"); err == nil || !strings.Contains(err.Error(), "not a token of this deployment") || !strings.Contains(err.Error(), role) {
		t.Fatalf("with a made-up token: %v", err)
	}
	t.Setenv("LEGATE_ADMIN_TOKEN", "the-admin-token")
	if _, err := add(hardened, "u1", "the-admin-token"); err == nil ||
		!strings.Contains(err.Error(), "LEGATE_TOKEN holds the admin API's token (the value of LEGATE_ADMIN_TOKEN); it must be a client's bearer token") {
		t.Fatalf("with the admin token: %v", err)
	}
	_, err := add(hardened, "u1", tokens["bob"])
	if err == nil || !strings.Contains(err.Error(), `principal "bob" is not pinned`) || !strings.Contains(err.Error(), `auth: {pins: ["bob"]}`) {
		t.Fatalf("a non-pinned admin: %v", err)
	}
	if _, err := add(nobody, "u1", tokens["alice"]); err == nil || !strings.Contains(err.Error(), `principal "alice" is not pinned`) {
		t.Fatalf("hardened with no pin admits nobody: %v", err)
	}
	if out, err := runCLI(t, "upstream", "list", "--state-dir", state, "--config", hardened); err != nil || strings.Contains(out, "u1") {
		t.Fatalf("a refused add stored the upstream, or reading is closed: %v\n%s", err, out)
	}
	if out, err := add(hardened, "u1", tokens["alice"]); err != nil {
		t.Fatalf("the pinned principal: %v\n%s", err, out)
	}
	t.Setenv(access.TokenEnv, tokens["bob"])
	if _, err := runCLIIn(t, "a password of bob\n", "user", "add", "carol", "--state-dir", state, "--config", hardened); err == nil || !strings.Contains(err.Error(), `"bob" is not pinned`) {
		t.Fatalf("user add by a non-pinned admin: %v", err)
	}
	if _, err := runCLI(t, "token", "revoke", "alice", "--state-dir", state, "--config", hardened); err == nil || !strings.Contains(err.Error(), `"bob" is not pinned`) {
		t.Fatalf("token revoke by a non-pinned admin: %v", err)
	}
}
