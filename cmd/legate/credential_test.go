package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A credential that cannot be resolved is a CONFIG_ERROR (not an expired
// login) naming its reference (never a value) and what the operator sets
// or changes, for every kind of reference.
func TestUnresolvableCredentialNamesItsReference(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("LEGATE_TEST_UNSET_TOKEN", "")
	cases := map[string]struct{ ref, want, remedy string }{
		"env": {"{env: LEGATE_TEST_UNSET_TOKEN}", "env:LEGATE_TEST_UNSET_TOKEN",
			"set the environment variable LEGATE_TEST_UNSET_TOKEN where the server runs, or change connectors[0].credentials.token"},
		"file": {"{file: " + filepath.Join(dir, "no-such-token") + "}", "file:" + filepath.Join(dir, "no-such-token"),
			"write the secret to " + filepath.Join(dir, "no-such-token") + " (readable by the server), or change connectors[0].credentials.token"},
		"vault": {"{vault: no-such-secret}", "vault:no-such-secret", "set the secret with legate vault set no-such-secret, or change connectors[0].credentials.token"},
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
			if !strings.Contains(out, "CONFIG_ERROR") || !strings.Contains(out, c.want) || !strings.Contains(out, c.remedy) || strings.Contains(out, "AUTH_EXPIRED") {
				t.Errorf("the error does not name %s:\n%s", c.want, out)
			}
		})
	}
}

// config validate warns, by key path and reference, of what is valid but
// will fail here: unset variables, missing secret files, rules that match
// no tool; the file stays valid.
func TestConfigValidateWarns(t *testing.T) {
	t.Setenv("LEGATE_TEST_UNSET_TOKEN", "")
	t.Setenv("LEGATE_TEST_UNSET_HEADER", "")
	t.Setenv("LEGATE_TEST_UNSET_TEAM_TOKEN", "")
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	doc := `connectors:
  - id: web
    type: http
    config: {base_url: "http://127.0.0.1:1", allow_private_networks: true}
    credentials:
      token: {env: LEGATE_TEST_UNSET_TOKEN}
      password: {file: /nonexistent/legate-secret}
    credential_sets:
      team: {token: {env: LEGATE_TEST_UNSET_TEAM_TOKEN}}
upstreams:
  - id: gh
    url: http://127.0.0.1:1/mcp
    header_env: {Authorization: LEGATE_TEST_UNSET_HEADER}
  - id: search
    url: http://127.0.0.1:1/mcp
    token: {env: LEGATE_TEST_UNSET_UP_TOKEN}
    headers: {X-Api-Key: {file: /nonexistent/legate-up-key}}
policy:
  rules:
    - {tool: "web.*", action: allow}
    - {tool: "slack.post_*", action: deny}
`
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "config", "validate", "--config", cfg, "--state-dir", t.TempDir())
	if err != nil || !strings.Contains(out, "valid (1 connector instance,") {
		t.Fatalf("config validate: %v\n%s", err, out)
	}
	for _, want := range []string{
		"warning: connectors[0].credentials.token: environment variable LEGATE_TEST_UNSET_TOKEN is not set",
		"warning: connectors[0].credentials.password: secret file /nonexistent/legate-secret cannot be read",
		"warning: connectors[0].credential_sets.team.token: environment variable LEGATE_TEST_UNSET_TEAM_TOKEN is not set",
		"warning: upstreams[0].header_env.Authorization: environment variable LEGATE_TEST_UNSET_HEADER is not set",
		"warning: upstreams[1].token: environment variable LEGATE_TEST_UNSET_UP_TOKEN is not set here: upstream search will not connect",
		"warning: upstreams[1].headers.X-Api-Key: secret file /nonexistent/legate-up-key cannot be read",
		`warning: policy.rules[1].tool: "slack.post_*" matches no tool`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "rules[0]") {
		t.Errorf("a rule that matches a tool is warned of:\n%s", out)
	}
}

// Per-user instances without auth.hardened are warned of, by config
// validate and by legate stdio at its start; a hardened deployment is not.
func TestPerUserWithoutHardeningWarns(t *testing.T) {
	t.Setenv("LEGATE_TEST_CLIENT_SECRET", "s")
	doc := `connectors:
  - id: mine
    type: http
    credentials_mode: per_user
    config: {base_url: "http://127.0.0.1:1", allow_private_networks: true}
    oauth:
      client_id: c
      client_secret: {env: LEGATE_TEST_CLIENT_SECRET}
      authorize_url: http://127.0.0.1:1/authorize
      token_url: http://127.0.0.1:1/token
      credential: token
`
	const want = "connectors mine take per-user credentials but auth.hardened is off"
	for _, hardened := range []bool{false, true} {
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		body := doc
		if hardened {
			body += "auth: {hardened: true, pins: [root]}\n"
		}
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := runCLI(t, "config", "validate", "--config", cfg, "--state-dir", t.TempDir())
		if err != nil {
			t.Fatalf("config validate: %v\n%s", err, out)
		}
		if strings.Contains(out, want) == hardened {
			t.Errorf("hardened %v, config validate:\n%s", hardened, out)
		}
		stdio := exec.Command(os.Args[0], "-test.run=^TestLegateProcess$", "--", "stdio", "--config", cfg, "--state-dir", t.TempDir())
		stdio.Env = append(os.Environ(), "LEGATE_TEST_MAIN=1", "LEGATE_STATE_DIR=")
		stdio.Stdin = strings.NewReader("")
		var stderr strings.Builder
		stdio.Stderr = &stderr
		stdio.Run()
		if strings.Contains(stderr.String(), want) == hardened {
			t.Errorf("hardened %v, legate stdio's log:\n%s", hardened, stderr.String())
		}
	}
}
