package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/auth/oauth"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

// runCLIIn runs the CLI with stdin.
func runCLIIn(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestUserLifecycle(t *testing.T) {
	state := t.TempDir()
	cfg := writeConfig(t, "auth:\n  resource: http://127.0.0.1:8080/mcp\n  oauth_server: {}\n")
	flags := []string{"--state-dir", state, "--config", cfg}
	if out, err := runCLIIn(t, "short\n", append([]string{"user", "add", "alice"}, flags...)...); err == nil || !strings.Contains(err.Error(), "at least 12") {
		t.Fatalf("a short password: %v\n%s", err, out)
	}
	if out, err := runCLIIn(t, "first password 1\n", append([]string{"user", "add", "alice", "--role", "approver", "--tenant", "acme"}, flags...)...); err != nil || !strings.Contains(out, `made user "alice"`) {
		t.Fatalf("add: %v\n%s", err, out)
	}
	if _, err := runCLIIn(t, "first password 1\n", append([]string{"user", "add", "alice"}, flags...)...); err == nil || !strings.Contains(err.Error(), `"alice" exists`) {
		t.Fatalf("a name in use: %v", err)
	}
	if out, err := runCLIIn(t, "second password 2\n", append([]string{"user", "passwd", "alice"}, flags...)...); err != nil {
		t.Fatalf("passwd: %v\n%s", err, out)
	}
	if _, err := runCLIIn(t, "second password 2\n", append([]string{"user", "passwd", "nobody"}, flags...)...); err == nil {
		t.Fatal("passwd of an unknown user succeeded")
	}

	// A grant alice gave a client, as the authorization server stores it.
	ctx := context.Background()
	st, err := sqlite.Open(ctx, state)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := st.Users().Get(ctx, "alice")
	if !oauth.CheckPassword(u.PasswordHash, "second password 2") || !strings.HasPrefix(u.PasswordHash, "$argon2id$") {
		t.Fatalf("stored hash %q does not hold the new password", u.PasswordHash)
	}
	now := time.Now()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.OAuth().CreateClient(ctx, store.OAuthClient{ID: "lgc_test", Name: "Claude", RedirectURIs: []string{"https://claude.ai/cb"}}))
	must(st.OAuth().CreateToken(ctx, store.OAuthToken{ID: "rt", Kind: store.OAuthRefresh, Hash: "h", Family: "family0123456789abcdef", ClientID: "lgc_test", Principal: "alice", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}))
	must(st.OAuth().CreateToken(ctx, store.OAuthToken{ID: "at", Kind: store.OAuthAccess, Family: "family0123456789abcdef", ClientID: "lgc_test", Principal: "alice", CreatedAt: now, ExpiresAt: now.Add(time.Minute)}))
	st.Close()

	out, err := runCLI(t, append([]string{"token", "list"}, flags...)...)
	if err != nil || !strings.Contains(out, "oauth:family0123456789 (alice)") || !strings.Contains(out, "approver") {
		t.Fatalf("token list shows the grant: %v\n%s", err, out)
	}
	if out, err := runCLI(t, append([]string{"token", "list", "-o", "json"}, flags...)...); err != nil || !strings.Contains(out, `"client": "Claude lgc_test"`) || strings.Contains(out, `"h"`) {
		t.Fatalf("token list -o json: %v\n%s", err, out)
	}
	if out, err := runCLI(t, append([]string{"token", "revoke", "oauth:family0123456789"}, flags...)...); err != nil || !strings.Contains(out, "revoked grant") {
		t.Fatalf("revoke a grant: %v\n%s", err, out)
	}
	if out, _ := runCLI(t, append([]string{"token", "list"}, flags...)...); strings.Contains(out, "oauth:") {
		t.Fatalf("a revoked grant is listed:\n%s", out)
	}
	if _, err := runCLI(t, append([]string{"token", "revoke", "oauth:family0123456789"}, flags...)...); err == nil {
		t.Fatal("revoking a revoked grant succeeded")
	}

	if out, err := runCLI(t, append([]string{"user", "disable", "alice"}, flags...)...); err != nil || !strings.Contains(out, `disabled user "alice"`) {
		t.Fatalf("disable: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"user", "list"}, {"user", "list", "-o", "json"}} {
		out, err := runCLI(t, append(args, flags...)...)
		if err != nil || !strings.Contains(out, "alice") || !strings.Contains(out, "true") || strings.Contains(out, "argon2") {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
}
