package doctor_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/doctor"
	"github.com/legate-mcp/legate/upstream/upconfig"
	"github.com/legate-mcp/legate/vault"
)

// find returns the first check named name.
func find(r doctor.Report, name string) doctor.Check {
	for _, c := range r {
		if c.Name == name {
			return c
		}
	}
	return doctor.Check{}
}

func TestChecks(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	key, err := vault.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	ring, err := vault.NewKeyRing(key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.File{Connectors: []config.Connector{{ID: "web", Type: "http", Credentials: map[string]vault.Ref{"token": {Vault: "web-token"}}}}}
	for name, tc := range map[string]struct {
		opts    doctor.Options
		check   string
		verdict string
		detail  string
	}{
		"config error": {doctor.Options{ConfigErr: errors.New("config.yaml:3: listen: must be host:port"), StateDir: dir},
			"config", doctor.Fail, "listen: must be host:port"},
		"credentials unchecked without a config": {doctor.Options{ConfigErr: errors.New("x"), StateDir: dir},
			"credentials", doctor.Warn, "the config does not load"},
		"vault reference without a vault": {doctor.Options{Config: cfg, StateDir: dir},
			"credentials", doctor.Warn, "connector web: token: vault:web-token not checked"},
		"credential set reference unset": {doctor.Options{Config: &config.File{Connectors: []config.Connector{{ID: "web", Type: "http",
			CredentialSets: map[string]map[string]vault.Ref{"team": {"token": {Env: "LEGATE_DOCTOR_TEST_UNSET"}}}}}}, StateDir: dir},
			"credentials", doctor.Fail, "connector web: credential set team: token: environment variable LEGATE_DOCTOR_TEST_UNSET"},
		"upstream token unset": {doctor.Options{Config: &config.File{Upstreams: []upconfig.Config{{ID: "up", URL: "http://127.0.0.1:1/mcp",
			Token: &vault.Ref{Env: "LEGATE_DOCTOR_TEST_TOKEN_UNSET"}}}}, StateDir: dir},
			"credentials", doctor.Fail, "upstream up: token: environment variable LEGATE_DOCTOR_TEST_TOKEN_UNSET"},
		"upstream header from the vault without a vault": {doctor.Options{Config: &config.File{Upstreams: []upconfig.Config{{ID: "up", URL: "http://127.0.0.1:1/mcp",
			Headers: map[string]vault.Ref{"X-Api-Key": {Vault: "up-key"}}}}}, StateDir: dir},
			"credentials", doctor.Warn, "upstream up: header X-Api-Key: vault:up-key not checked"},
		"embeddings key unset": {doctor.Options{Config: &config.File{Search: config.Search{EmbeddingsURL: "http://127.0.0.1:11434/v1/embeddings",
			EmbeddingsModel: "m", EmbeddingsKey: &vault.Ref{Env: "LEGATE_DOCTOR_TEST_EMBED_UNSET"}}}, StateDir: dir},
			"credentials", doctor.Fail, "search: embeddings_key: environment variable LEGATE_DOCTOR_TEST_EMBED_UNSET"},
		"agent model key unset": {doctor.Options{Config: &config.File{Agent: config.Agent{Model: config.AgentModel{Model: "m",
			AccessToken: &vault.Ref{Env: "LEGATE_DOCTOR_TEST_MODEL_UNSET"}}}}, StateDir: dir},
			"credentials", doctor.Fail, "agent.model: access_token: environment variable LEGATE_DOCTOR_TEST_MODEL_UNSET"},
		"key ring from the environment": {doctor.Options{Config: cfg, StateDir: dir, Keys: vault.KeySource{Env: ring.EnvValue()}},
			"vault key", doctor.OK, "primary " + key.ID},
		"bad key ring": {doctor.Options{Config: cfg, StateDir: dir, Keys: vault.KeySource{Env: "nonsense"}},
			"vault key", doctor.Fail, "LEGATE_MASTER_KEY"},
		"key file missing": {doctor.Options{Config: cfg, StateDir: dir, Keys: vault.KeySource{File: filepath.Join(dir, "none")}},
			"vault key", doctor.Fail, "no such file"},
		"state dir owner only": {doctor.Options{Config: cfg, StateDir: dir},
			"state dir", doctor.OK, "(mode 0700)"},
	} {
		t.Run(name, func(t *testing.T) {
			r := doctor.Run(context.Background(), tc.opts)
			c := find(r, tc.check)
			if c.Verdict != tc.verdict || !strings.Contains(c.Detail, tc.detail) {
				t.Errorf("%s: %s %q, want %s containing %q", tc.check, c.Verdict, c.Detail, tc.verdict, tc.detail)
			}
		})
	}
}

// A server whose clock is a minute off fails the clock check; an upstream
// that failed is a warning.
func TestClockSkew(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().Add(-time.Minute).UTC().Format(http.TimeFormat))
		if r.URL.Path == "/admin/v1/status" {
			w.Write([]byte(`{"version":"v1","listen":"127.0.0.1:1","upstreams":[{"id":"gone","circuit":"closed","last_error":"connection refused"}]}`))
		}
	}))
	t.Cleanup(srv.Close)
	r := doctor.Run(context.Background(), doctor.Options{Config: config.Default(), StateDir: t.TempDir(), Server: &admin.Client{URL: srv.URL}})
	if c := find(r, "clock"); c.Verdict != doctor.Fail || !strings.Contains(c.Detail, "-1m") {
		t.Errorf("clock: %+v", c)
	}
	if c := find(r, "server"); c.Verdict != doctor.OK {
		t.Errorf("server: %+v", c)
	}
	if c := find(r, "upstream"); c.Verdict != doctor.Warn || c.Detail != "gone: connection refused" {
		t.Errorf("upstream: %+v", c)
	}
}
