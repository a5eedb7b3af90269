package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/vault"
)

// legateIn runs the CLI in process with stdin and returns its standard
// output and error together.
func legateIn(t *testing.T, stdin string, args ...string) (string, error) {
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

func TestVaultCredentialResolvesAtCallTime(t *testing.T) {
	const secret = "vault-canary-5e1d-not-for-output"
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+secret {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Write([]byte("pong"))
	}))
	defer target.Close()
	t.Setenv(vault.EnvMasterKey, "")
	t.Setenv(vault.EnvKeyFile, "")
	state := t.TempDir()
	flags := []string{"--state-dir", state}
	// Logs go to os.Stderr: catch them.
	logFile, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = logFile
	t.Cleanup(func() { os.Stderr = stderr; logFile.Close() })
	var outputs []string
	var out string
	run := func(stdin string, args ...string) (string, error) {
		out, err := legateIn(t, stdin, append(args, flags...)...)
		outputs = append(outputs, out)
		if err != nil {
			outputs = append(outputs, err.Error())
		}
		return out, err
	}

	out, err = run("", "connector", "add", "web", "--type", "http",
		"--set", "base_url="+target.URL, "--set", "allow_private_networks=true", "--credential", "token=vault:web-token")
	if err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	// Not set yet: the call fails as CONFIG_ERROR, naming the secret and
	// how to set it.
	out, err = run("", "tools", "call", "web.call", "--args", `{"path": "/ping"}`)
	if err == nil || !strings.Contains(out, "CONFIG_ERROR") || !strings.Contains(out, "legate vault set web-token") {
		t.Fatalf("call before set: %v\n%s", err, out)
	}

	// The value comes from stdin, never argv.
	if out, err = run("", "vault", "set", "web-token"); err == nil || !strings.Contains(err.Error(), "no value on standard input") {
		t.Fatalf("set with empty stdin: %v\n%s", err, out)
	}
	out, err = run(secret+"\n", "vault", "set", "web-token")
	if err != nil || !strings.Contains(out, "vault:web-token (shared) version 1") {
		t.Fatalf("set: %v\n%s", err, out)
	}
	if fi, err := os.Stat(filepath.Join(state, vault.KeyFileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	out, err = run("other-tenant-value", "vault", "set", "web-token", "--tenant", "acme")
	if err != nil || !strings.Contains(out, `vault:web-token (tenant "acme") version 1`) {
		t.Fatalf("set for a tenant: %v\n%s", err, out)
	}

	out, err = run("", "vault", "list")
	if err != nil || !strings.Contains(out, "web-token") || !strings.Contains(out, "acme") || strings.Count(out, "\n") != 3 {
		t.Fatalf("list: %v\n%s", err, out)
	}
	out, err = run("", "vault", "list", "--tenant", "acme", "-o", "json")
	if err != nil || !strings.Contains(out, `"tenant": "acme"`) || strings.Contains(out, `"tenant": ""`) {
		t.Fatalf("list --tenant acme: %v\n%s", err, out)
	}

	out, err = run("", "tools", "call", "web.call", "--args", `{"path": "/ping"}`)
	if err != nil || !strings.Contains(out, "pong") {
		t.Fatalf("call: %v\n%s", err, out)
	}

	// Rotation keeps the credential working and leaves one key in the file.
	out, err = run("", "vault", "rotate", "--batch-size", "1")
	if err != nil || !strings.Contains(out, "re-wrapped 2 data keys") || !strings.Contains(out, "retired") {
		t.Fatalf("rotate: %v\n%s", err, out)
	}
	out, err = run("", "tools", "call", "web.call", "--args", `{"path": "/ping"}`)
	if err != nil || !strings.Contains(out, "pong") {
		t.Fatalf("call after rotate: %v\n%s", err, out)
	}

	out, err = run("", "vault", "rm", "web-token")
	if err != nil || !strings.Contains(out, "removed vault:web-token (shared) (1 versions)") {
		t.Fatalf("rm: %v\n%s", err, out)
	}
	if _, err = run("", "vault", "rm", "web-token"); err == nil || !strings.Contains(err.Error(), "vault:web-token") {
		t.Fatalf("second rm: %v", err)
	}
	out, err = run("", "tools", "call", "web.call", "--args", `{"path": "/ping"}`)
	if err == nil || !strings.Contains(out, "CONFIG_ERROR") {
		t.Fatalf("call after rm: %v\n%s", err, out)
	}

	for _, o := range outputs {
		if strings.Contains(o, secret) {
			t.Fatalf("the secret value reached the output:\n%s", o)
		}
	}
	logs, _ := os.ReadFile(logFile.Name())
	if strings.Count(string(logs), "created a key file") != 1 || strings.Contains(string(logs), secret) {
		t.Fatalf("logs: want one key-file warning and no secret value:\n%s", logs)
	}
	// Nothing in the state directory — database, WAL, audit rows — holds the
	// value in the clear.
	files, _ := filepath.Glob(filepath.Join(state, "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte(secret)) {
			t.Fatalf("%s holds the secret value in the clear", f)
		}
	}
}

func TestVaultRotateWithMasterKeyFromEnvironment(t *testing.T) {
	k, _ := vault.NewKey()
	ring, _ := vault.NewKeyRing(k)
	t.Setenv(vault.EnvMasterKey, ring.EnvValue())
	state := t.TempDir()
	if out, err := legateIn(t, "s3cret-value", "vault", "set", "db-password", "--state-dir", state); err != nil {
		t.Fatalf("set: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(state, vault.KeyFileName)); !os.IsNotExist(err) {
		t.Fatalf("a key file was made though LEGATE_MASTER_KEY is set: %v", err)
	}
	out, err := legateIn(t, "", "vault", "rotate", "--state-dir", state)
	if err != nil || !strings.Contains(out, "Set LEGATE_MASTER_KEY to this value") {
		t.Fatalf("rotate, step 1: %v\n%s", err, out)
	}
	var value string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(line, ","+ring.EnvValue()) {
			value = line
		}
	}
	if value == "" {
		t.Fatalf("no value to set in:\n%s", out)
	}
	t.Setenv(vault.EnvMasterKey, value)
	out, err = legateIn(t, "", "vault", "rotate", "--state-dir", state)
	if err != nil || !strings.Contains(out, "re-wrapped 1 data keys") || !strings.Contains(out, "no secret uses "+k.ID+" any more: remove it from LEGATE_MASTER_KEY") {
		t.Fatalf("rotate, step 2: %v\n%s", err, out)
	}
	out, err = legateIn(t, "", "vault", "list", "--state-dir", state)
	if err != nil || strings.Contains(out, k.ID) || strings.Contains(out, "s3cret-value") {
		t.Fatalf("list after rotation: %v\n%s", err, out)
	}
}

func TestVaultCredentialPerTenant(t *testing.T) {
	ctx := context.Background()
	var seen []string
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
		w.Write([]byte("pong"))
	}))
	defer target.Close()
	path := writeConfig(t, "connectors:\n  - id: web\n    type: http\n    config: {base_url: "+target.URL+", allow_private_networks: true}\n"+
		"    credentials:\n      token: {vault: api-token}\n")
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	st, err := sqlite.Open(ctx, state)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	v := vault.New(st.Secrets(), vault.KeySource{File: filepath.Join(state, vault.KeyFileName), Create: true}, nil)
	if _, err := v.Set(ctx, "", "api-token", []byte("shared-tok")); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Set(ctx, "acme", "api-token", []byte("acme-tok")); err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(ctx, server.Options{Config: cfg, Store: st, Vault: v})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	for tenant, want := range map[string]string{"acme": "Bearer acme-tok", "globex": "Bearer shared-tok", "": "Bearer shared-tok"} {
		seen = nil
		res, err := gw.Call(ctx, "web.call", []byte(`{"path": "/x"}`), server.CallOptions{Caller: connectors.Caller{Tenant: tenant}})
		if err != nil || res.IsError || len(seen) != 1 || seen[0] != want {
			t.Errorf("tenant %q: %v %+v, sent %q; want %q", tenant, err, res, seen, want)
		}
	}

	bad := writeConfig(t, "connectors:\n  - type: http\n    config: {base_url: http://127.0.0.1:1}\n"+
		"    credentials:\n      token: {vault: api-token, env: TOKEN}\n")
	if _, err := legateIn(t, "", "config", "validate", "--config", bad, "--state-dir", t.TempDir()); err == nil ||
		!strings.Contains(err.Error(), "connectors[0].credentials.token") || !strings.Contains(err.Error(), "{vault: NAME}") {
		t.Fatalf("two sources: %v", err)
	}
}
