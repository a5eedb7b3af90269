package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// doctor reports each check on a line: a missing credential and a key
// file others can read fail (naming the reference, never a value), a
// loose state directory warns, and the running server's open circuit is
// shown with its clock compared.
func TestDoctor(t *testing.T) {
	const token = "doctor-token"
	const secret = "doctor-s3cr3t-value"
	srv, _ := openCircuitServer(t, token)
	t.Setenv("LEGATE_DOCTOR_SET", secret)
	t.Setenv("LEGATE_MASTER_KEY", "")
	t.Setenv("LEGATE_KEY_FILE", "")
	state := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(state, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "vault.key"), []byte("k1:AAAA\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(state, 0o755) // whatever the umask
	cfg := writeConfig(t, `
connectors:
  - id: set
    type: http
    config: {base_url: "http://127.0.0.1:1"}
    credentials:
      token: {env: LEGATE_DOCTOR_SET}
  - id: unset
    type: http
    config: {base_url: "http://127.0.0.1:1"}
    credentials:
      token: {env: LEGATE_DOCTOR_UNSET}
upstreams:
  - {id: up, url: "http://127.0.0.1:1/mcp", header_env: {Authorization: LEGATE_DOCTOR_HEADER}}
`)
	out, err := runCLI(t, "doctor", "--config", cfg, "--state-dir", state, "--url", srv, "--token", token)
	if err == nil {
		t.Errorf("doctor passed with failing checks:\n%s", out)
	}
	for _, want := range []string{
		`(?m)^ok +config +` + regexp.QuoteMeta(cfg) + ` is valid$`,
		`(?m)^warn +state dir +.* is mode 0755`,
		`(?m)^fail +vault key +key file .* is mode 0644`,
		`(?m)^fail +credentials +connector unset: token: environment variable LEGATE_DOCTOR_UNSET is not set or empty`,
		`(?m)^fail +credentials +upstream up: header Authorization: environment variable LEGATE_DOCTOR_HEADER is not set or empty`,
		`(?m)^ok +server +legate v1\.2\.3 on 127\.0\.0\.1:`,
		`(?m)^warn +upstream +flaky: circuit open: (.*500|.*Internal Server Error)`,
		`(?m)^ok +clock +`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("no line %s in:\n%s", want, out)
		}
	}
	if strings.Contains(out, secret) || strings.Contains(out, "connector set:") {
		t.Errorf("the set credential is reported:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(state, stateFile)); err == nil {
		t.Error("doctor created the database")
	}
}
