package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/connectors/github/ghcore"
)

// `legate connector show` prints an instance's record from the running
// server: its environment, status and why, circuit, adapter and API
// versions, and the scopes its token has (GitHub's X-OAuth-Scopes, read
// by `legate connector test`) against those its toolsets need; -o json
// has the same. With no server running it shows what the definition
// says: no circuit, no test.
func TestConnectorShowPrintsTheRecord(t *testing.T) {
	var failing atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v3/user", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-OAuth-Scopes", "repo, read:org")
		w.Write([]byte(`{"login":"octo","id":1}`))
	})
	mux.HandleFunc("GET /api/v3/repos/acme/api/issues/1", func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte(`{"number":1,"title":"t","state":"open","user":{"login":"octo"}}`))
	})
	gh := httptest.NewServer(mux)
	defer gh.Close()
	t.Setenv("SHOW_GH_TOKEN", "ghp_show")
	state := t.TempDir()
	cfg := writeConfig(t, `
policy:
  defaults: {read: allow, draft: allow, write: allow, destructive: allow}
connectors:
  - id: gh
    type: github
    environment: production
    config: {base_url: "`+gh.URL+`/", allow_private_networks: true, max_attempts: 1, toolsets: [default, actions]}
    credentials: {token: {env: SHOW_GH_TOKEN}}
`)
	flags := []string{"--config", cfg, "--state-dir", state}
	base, stop := serveOn(t, freeAddr(t), cfg, state)
	defer stop()

	if out, err := runCLI(t, append([]string{"connector", "test", "gh"}, flags...)...); err != nil || !strings.Contains(out, "ok    gh") {
		t.Fatalf("test: %v\n%s", err, out)
	}
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	failing.Store(true)
	for range 5 { // the default failures in a row
		cs.CallTool(ctx, &mcp.CallToolParams{Name: "gh__get_issue", Arguments: map[string]any{"repo": "acme/api", "number": 1}})
	}

	out, err := runCLI(t, append([]string{"connector", "show", "gh"}, flags...)...)
	if err != nil {
		t.Fatalf("show: %v\n%s", err, out)
	}
	for _, want := range []string{
		`(?m)^ENVIRONMENT: +production$`,
		`(?m)^STATUS: +degraded: .*circuit open after repeated provider failures.*; missing scopes: workflow`,
		`(?m)^CIRCUIT: +open, a trial call at `,
		`(?m)^ADAPTER VERSION: +1\.0\.0$`,
		`(?m)^API VERSION: +` + regexp.QuoteMeta(ghcore.APIVersion) + `$`,
		`(?m)^SCOPES HAS: +read:org, repo$`,
		`(?m)^SCOPES NEEDS: +repo, workflow$`,
		`(?m)^SCOPES MISSING: +workflow$`,
		`(?m)^LAST TEST: +ok, `,
		`(?m)^DEFINED IN: +` + regexp.QuoteMeta(cfg) + ` connectors\[0\]$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("show lacks %s:\n%s", want, out)
		}
	}
	out, _, err = runCLISplit(t, append([]string{"connector", "show", "gh", "-o", "json"}, flags...)...)
	var c admin.Connector
	if err != nil || json.Unmarshal([]byte(out), &c) != nil {
		t.Fatalf("show -o json: %v\n%s", err, out)
	}
	if c.Environment != "production" || c.Status != admin.StatusDegraded || c.Circuit != "open" || c.AdapterVersion != "1.0.0" || c.APIVersion != ghcore.APIVersion ||
		c.Scopes == nil || !slices.Equal(c.Scopes.Has, []string{"read:org", "repo"}) || !slices.Equal(c.Scopes.Missing, []string{"workflow"}) {
		t.Errorf("show -o json: %s", out)
	}
	if out, err := runCLI(t, append([]string{"connector", "list"}, flags...)...); err != nil || !regexp.MustCompile(`(?m)^gh +github +degraded +production `).MatchString(out) {
		t.Errorf("list: %v\n%s", err, out)
	}

	stop()
	out, err = runCLI(t, append([]string{"connector", "show", "gh"}, flags...)...)
	if err != nil || !regexp.MustCompile(`(?m)^STATUS: +active$`).MatchString(out) || !regexp.MustCompile(`(?m)^CIRCUIT: +-$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^SCOPES HAS: +unknown`).MatchString(out) || !regexp.MustCompile(`(?m)^SCOPES NEEDS: +repo, workflow$`).MatchString(out) {
		t.Errorf("show with no server running: %v\n%s", err, out)
	}
	if _, err := runCLI(t, append([]string{"connector", "show", "nope"}, flags...)...); err == nil || !strings.Contains(err.Error(), `no connector "nope"`) {
		t.Errorf("show of an unknown id: %v", err)
	}
}
