package operations_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/config"
	_ "github.com/legate-mcp/legate/connectors/all"
	"github.com/legate-mcp/legate/operations"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

// Adding a connector is one behaviour, whoever adds it: the checks, the
// refusals and the audit row are the operation's.
func TestAddConnectorWithoutAServer(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg, err := config.Parse([]byte("connectors:\n  - {id: hooks, type: webhook, config: {url: \"https://hooks.example.com/\"}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Path = "/etc/legate/config.yaml"
	ops := operations.Standalone(operations.Parts{Store: st, Config: func() *config.File { return cfg }, Principal: "cli:ann"}, nil)
	web := map[string]any{"base_url": "https://api.example.com/"}
	for name, tc := range map[string]struct {
		in   admin.NewConnector
		want error
		says string
	}{
		"for a tenant":      {admin.NewConnector{ID: "t", Type: "http", Tenant: "acme", Config: web}, admin.ErrInvalid, "shared by every tenant"},
		"an id of the file": {admin.NewConnector{ID: "hooks", Type: "http", Config: web}, store.ErrExists, "already defined in /etc/legate/config.yaml"},
		"an invalid config": {admin.NewConnector{ID: "bad", Type: "http", Config: map[string]any{"base_ur": "x"}}, admin.ErrInvalid, "base_ur"},
		"secrets, no vault": {admin.NewConnector{ID: "s", Type: "http", Config: web, Secrets: map[string]string{"token": "x"}}, admin.ErrInvalid, "no vault"},
		"added":             {admin.NewConnector{ID: "web", Type: "http", Config: web}, nil, ""},
	} {
		_, err := ops.AddConnector(ctx, tc.in)
		if !errors.Is(err, tc.want) || tc.want != nil && !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want %v saying %q", name, err, tc.want, tc.says)
		}
	}
	if _, err := ops.AddConnector(ctx, admin.NewConnector{ID: "web", Type: "http", Config: web}); !errors.Is(err, store.ErrExists) || !strings.Contains(err.Error(), "remove it first") {
		t.Errorf("added twice: %v", err)
	}
	rows, err := st.Audit().Query(ctx, store.AuditQuery{Tool: "admin.connectors.add", Limit: 100})
	if err != nil || len(rows) != 6 {
		t.Fatalf("%d rows (%v), want one an attempt", len(rows), err)
	}
	ok := 0
	for _, r := range rows {
		if r.Principal != "cli:ann" {
			t.Errorf("row by %q", r.Principal)
		}
		if r.Outcome == "ok" {
			ok++
		}
	}
	if ok != 1 {
		t.Errorf("%d rows ok, want the one added", ok)
	}
}

// An instance's config is shown as written: a value `${NAME}` gave (a
// webhook URL whose path is its secret) is shown as `${NAME}`, never the
// value, wherever it stands in a string.
func TestConnectorConfigShownAsWritten(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	env := map[string]string{"HOOK_URL": "https://hooks.example.com/services/T0001/B0002/s3cr3tToken", "TEAM": "platform-team", "N": "3"}
	doc := "connectors:\n  - id: hooks\n    type: webhook\n    config:\n      url: ${HOOK_URL}\n      headers: {X-Team: \"${TEAM}, of ${HOOK_URL}\"}\n      max_attempts: ${N}\n"
	cfg, err := config.Parse([]byte(doc), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	ops := operations.Standalone(operations.Parts{Store: st, Config: func() *config.File { return cfg }, Principal: "cli:ann"}, nil)
	c, err := ops.Connector(ctx, "hooks")
	if err != nil {
		t.Fatal(err)
	}
	got := string(c.Config)
	if strings.Contains(got, "s3cr3tToken") || strings.Contains(got, "platform-team") {
		t.Fatalf("the config shows an expanded value: %s", got)
	}
	for _, want := range []string{`"url":"${HOOK_URL}"`, `"X-Team":"${TEAM}, of ${HOOK_URL}"`, `"max_attempts":3`} {
		if !strings.Contains(got, want) {
			t.Errorf("the config %s lacks %s", got, want)
		}
	}
}
