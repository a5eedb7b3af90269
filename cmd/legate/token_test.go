package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/store/sqlite"
)

var tokenPattern = regexp.MustCompile(`lgt_[A-Za-z0-9_-]{43}`)

func TestTokenLifecycle(t *testing.T) {
	state := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("profiles:\n  - {name: ops}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--state-dir", state, "--config", cfg}

	if _, err := runCLI(t, append([]string{"token", "create", "typo-bot", "--profile", "opz"}, flags...)...); err == nil || !strings.Contains(err.Error(), `profile "opz": the config has no such profile (it has: ops)`) {
		t.Fatalf("create with an unknown profile: %v", err)
	}
	out, err := runCLI(t, append([]string{"token", "create", "ci-bot", "--tenant", "acme", "--role", "approver", "--profile", "ops"}, flags...)...)
	if err != nil {
		t.Fatalf("create: %v\n%s", err, out)
	}
	tokens := tokenPattern.FindAllString(out, -1)
	if len(tokens) != 1 || strings.Count(out, tokens[0]) != 1 || !strings.Contains(out, "shown only this once") {
		t.Fatalf("create should print one token once:\n%s", out)
	}
	token := tokens[0]

	if out, err := runCLI(t, append([]string{"token", "create", "ci-bot"}, flags...)...); err == nil || !strings.Contains(err.Error(), `"ci-bot" exists`) {
		t.Fatalf("duplicate name: %v\n%s", err, out)
	}
	if _, err := runCLI(t, append([]string{"token", "create", "x", "--role", "root"}, flags...)...); err == nil || !strings.Contains(err.Error(), `role "root"`) {
		t.Fatalf("bad role: %v", err)
	}
	if out, err := runCLI(t, append([]string{"token", "create", "dev"}, flags...)...); err != nil || !strings.Contains(out, "does not turn static tokens on") {
		t.Fatalf("create without auth on: %v\n%s", err, out)
	}

	hash := auth.HashToken(token)
	for _, args := range [][]string{{"token", "list"}, {"token", "list", "-o", "json"}, {"token", "list", "-o", "yaml"}} {
		out, err := runCLI(t, append(args, flags...)...)
		if err != nil || !strings.Contains(out, "ci-bot") || !strings.Contains(out, "acme") || !strings.Contains(out, "approver") || !strings.Contains(out, "ops") {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		if strings.Contains(out, "lgt_") || strings.Contains(out, hash) {
			t.Fatalf("%v shows a token or its hash:\n%s", args, out)
		}
	}

	// The server, on the same state directory, accepts the token.
	verify := func() error {
		t.Helper()
		st, err := sqlite.Open(context.Background(), state)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		on := true
		a, err := auth.NewAuthenticator(config.Auth{Tokens: &on}, st.Tokens(), nil)
		if err != nil {
			t.Fatal(err)
		}
		ti, err := a.Verify(context.Background(), token, nil)
		if err == nil {
			if p := auth.PrincipalFrom(ti); p.Name != "ci-bot" || p.Tenant != "acme" || p.Role != auth.RoleApprover || p.Profile != "ops" {
				t.Fatalf("principal %+v", p)
			}
		}
		return err
	}
	if err := verify(); err != nil {
		t.Fatalf("the new token is refused: %v", err)
	}

	// Only the hash reaches the database files (with its WAL).
	files, _ := filepath.Glob(filepath.Join(state, "*"))
	sawHash := false
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(token)) || bytes.Contains(b, []byte(token[len(auth.TokenPrefix):])) {
			t.Fatalf("%s holds the token", f)
		}
		sawHash = sawHash || bytes.Contains(b, []byte(hash))
	}
	if !sawHash {
		t.Fatalf("no file in %s holds the token's hash (files %v)", state, files)
	}

	if out, err := runCLI(t, append([]string{"token", "revoke", "ci-bot"}, flags...)...); err != nil || !strings.Contains(out, `revoked token "ci-bot"`) {
		t.Fatalf("revoke: %v\n%s", err, out)
	}
	if err := verify(); err == nil {
		t.Fatal("a revoked token is accepted")
	}
	if _, err := runCLI(t, append([]string{"token", "revoke", "ci-bot"}, flags...)...); err == nil || !strings.Contains(err.Error(), "was revoked") {
		t.Fatalf("second revoke: %v", err)
	}
	if _, err := runCLI(t, append([]string{"token", "revoke", "nobody"}, flags...)...); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("revoke unknown: %v", err)
	}
	out, err = runCLI(t, append([]string{"token", "list"}, flags...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 3 || !strings.HasPrefix(lines[1], "ci-bot") || strings.HasSuffix(lines[1], "-") || !strings.HasSuffix(lines[2], "-") {
		t.Fatalf("list after revoke (ci-bot revoked, dev not): %v\n%s", err, out)
	}
}
