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
)

// runCLI runs the CLI in process and returns its standard output.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func writeConfig(t *testing.T, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConnectorLifecycle(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Write([]byte("pong"))
	}))
	defer target.Close()
	t.Setenv("CLI_TEST_TOKEN", "tok")
	state := t.TempDir()
	cfg := writeConfig(t, "connectors:\n  - id: hooks\n    type: webhook\n    config: {url: http://127.0.0.1:1/in, allow_private_networks: true}\n")
	flags := []string{"--config", cfg, "--state-dir", state}

	out, err := runCLI(t, append([]string{"connector", "add", "web", "--type", "http",
		"--set", "base_url=" + target.URL, "--set", "allow_private_networks=true",
		"--credential", "token=env:CLI_TEST_TOKEN"}, flags...)...)
	if err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}

	out, err = runCLI(t, append([]string{"connector", "list"}, flags...)...)
	if err != nil || !strings.Contains(out, "web") || !strings.Contains(out, "token=env:CLI_TEST_TOKEN") || !strings.Contains(out, "the store") || !strings.Contains(out, "hooks") {
		t.Fatalf("list: %v\n%s", err, out)
	}

	out, err = runCLI(t, append([]string{"connector", "test", "web"}, flags...)...)
	if err != nil || !strings.Contains(out, "ok    web") {
		t.Fatalf("test: %v\n%s", err, out)
	}

	out, err = runCLI(t, append([]string{"tools", "call", "web.call", "--args", `{"path": "/ping"}`}, flags...)...)
	if err != nil || !strings.Contains(out, "pong") {
		t.Fatalf("call: %v\n%s", err, out)
	}

	// The same id in the config file and the store: an error naming both.
	cfg2 := writeConfig(t, "connectors:\n  - id: web\n    type: http\n    config: {base_url: http://127.0.0.1:1}\n")
	_, err = runCLI(t, "connector", "list", "--config", cfg2, "--state-dir", state)
	if err == nil || !strings.Contains(err.Error(), cfg2+" connectors[0]") || !strings.Contains(err.Error(), "the store") {
		t.Fatalf("duplicate id: %v", err)
	}
	_, err = runCLI(t, append([]string{"connector", "add", "hooks", "--type", "webhook", "--set", "url=http://x.example/"}, flags...)...)
	if err == nil || !strings.Contains(err.Error(), "already defined in "+cfg) {
		t.Fatalf("add over a config id: %v", err)
	}

	_, err = runCLI(t, append([]string{"connector", "remove", "hooks"}, flags...)...)
	if err == nil || !strings.Contains(err.Error(), "edit the file") {
		t.Fatalf("remove of a config instance: %v", err)
	}
	if out, err = runCLI(t, append([]string{"connector", "remove", "web"}, flags...)...); err != nil {
		t.Fatalf("remove: %v\n%s", err, out)
	}
	out, _ = runCLI(t, append([]string{"connector", "list"}, flags...)...)
	if strings.Contains(out, "web ") {
		t.Fatalf("still listed after remove:\n%s", out)
	}
}

func TestConnectorAddValidatesFirst(t *testing.T) {
	state := t.TempDir()
	_, err := runCLI(t, "connector", "add", "web", "--type", "http", "--set", "base_ur=http://x", "--state-dir", state)
	if err == nil || !strings.Contains(err.Error(), "base_ur: unknown key") || !strings.Contains(err.Error(), "base_url: is required") {
		t.Fatalf("got %v", err)
	}
	_, err = runCLI(t, "connector", "add", "--type", "nosuch", "--state-dir", state)
	if err == nil || !strings.Contains(err.Error(), `unknown connector type "nosuch"`) {
		t.Fatalf("got %v", err)
	}
	out, _ := runCLI(t, "connector", "list", "--state-dir", state)
	if strings.Count(out, "\n") != 1 {
		t.Fatalf("an invalid instance was stored:\n%s", out)
	}
}

func TestConfigValidate(t *testing.T) {
	good := writeConfig(t, "tool_names: canonical\nconnectors:\n  - type: webhook\n    config: {url: https://hooks.example.com/in}\n")
	out, err := runCLI(t, "config", "validate", "--config", good, "--state-dir", t.TempDir())
	if err != nil || !strings.Contains(out, "valid (1 connector instance, 5 tools)") {
		t.Fatalf("good config: %v\n%s", err, out)
	}
	bad := writeConfig(t, "connectors:\n  - type: webhook\n    config: {url: ftp://x, max_attempts: many}\n")
	_, err = runCLI(t, "config", "validate", "--config", bad, "--state-dir", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "connectors[0].config.max_attempts") {
		t.Fatalf("bad config: %v", err)
	}
}

// config validate counts the instances of the store --store names, as
// serve would run them, and creates no store that is not there.
func TestConfigValidateReadsTheStoreOfItsURL(t *testing.T) {
	good := writeConfig(t, "tool_names: canonical\nconnectors:\n  - type: webhook\n    config: {url: https://hooks.example.com/in}\n")
	db := filepath.Join(t.TempDir(), "elsewhere.db")
	if out, err := runCLI(t, "connector", "add", "web", "--type", "http", "--set", "base_url=https://api.example.com/",
		"--config", good, "--store", "sqlite://"+db, "--state-dir", t.TempDir()); err != nil {
		t.Fatalf("add: %v\n%s", err, out)
	}
	out, err := runCLI(t, "config", "validate", "--config", good, "--store", "sqlite://"+db, "--state-dir", t.TempDir())
	if err != nil || !strings.Contains(out, "valid (2 connector instances,") {
		t.Fatalf("with the store holding web: %v\n%s", err, out)
	}
	missing := filepath.Join(t.TempDir(), "missing.db")
	for _, url := range []string{"sqlite://" + missing, missing} {
		out, err = runCLI(t, "config", "validate", "--config", good, "--store", url, "--state-dir", t.TempDir())
		if err != nil || !strings.Contains(out, "valid (1 connector instance,") {
			t.Fatalf("--store %s, no such file: %v\n%s", url, err, out)
		}
		if _, err := os.Stat(missing); err == nil {
			t.Fatalf("--store %s: config validate created the store", url)
		}
	}
}

func TestToolsListAndUnknownCall(t *testing.T) {
	state := t.TempDir()
	out, err := runCLI(t, "tools", "list", "--state-dir", state, "-o", "json")
	if err != nil || !strings.Contains(out, `"name": "http__request"`) || !strings.Contains(out, `"canonical": "http.request"`) {
		t.Fatalf("tools list: %v\n%s", err, out)
	}
	_, err = runCLI(t, "tools", "call", "nope", "--state-dir", state)
	if err == nil || !strings.Contains(err.Error(), `unknown tool "nope"`) {
		t.Fatalf("unknown tool: %v", err)
	}
}

// An unknown --log-level is an error naming the levels, not info.
func TestUnknownLogLevel(t *testing.T) {
	_, err := runCLI(t, "tools", "list", "--log-level", "bogus", "--state-dir", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), `--log-level "bogus": want debug, info, warn or error`) {
		t.Fatalf("got %v", err)
	}
	if out, err := runCLI(t, "tools", "list", "--log-level", "WARN", "-o", "json", "--state-dir", t.TempDir()); err != nil {
		t.Fatalf("--log-level WARN: %v\n%s", err, out)
	}
}
