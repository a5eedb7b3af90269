package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors/github/ghcore"
	"github.com/legate-mcp/legate/server"
)

// recordGitHub stands in for GitHub: GET /user with the token's scopes
// (repo, read:org), and an issue whose GET fails with 502 while failing.
func recordGitHub(t *testing.T) (url string, failing *atomic.Bool, hits *atomic.Int32) {
	failing, hits = new(atomic.Bool), new(atomic.Int32)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v3/user", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-OAuth-Scopes", "repo, read:org")
		w.Write([]byte(`{"login":"octo","id":1}`))
	})
	mux.HandleFunc("GET /api/v3/repos/acme/api/issues/1", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if failing.Load() {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		w.Write([]byte(`{"number":1,"title":"t","state":"open","user":{"login":"octo"}}`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, failing, hits
}

// adminGet answers GET path of the admin API h with the admin token,
// decoded into v.
func adminGet(t *testing.T, h http.Handler, path, token string, v any) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
	}
	if err := json.Unmarshal(w.Body.Bytes(), v); err != nil {
		t.Fatal(err)
	}
}

// Each connector instance's record — environment, status, circuit,
// adapter and API versions, the scopes its credential has against those
// its toolsets need — is in the admin API's JSON, on the panel's
// connectors page and, for the circuit, in /metrics; a native connector
// whose provider keeps failing opens its circuit, fails fast without
// calling the provider, and says so in its status.
func TestConnectorRecordThroughTheAPIAndThePanel(t *testing.T) {
	const token = "record-admin-token"
	gh, failing, hits := recordGitHub(t)
	t.Setenv("RECORD_GH_TOKEN", "ghp_record")
	cfg, err := config.Parse([]byte(allowAll+fmt.Sprintf(`
connectors:
  - id: gh
    type: github
    environment: production
    config: {base_url: %q, allow_private_networks: true, max_attempts: 1, toolsets: [default, actions]}
    credentials: {token: {env: RECORD_GH_TOKEN}}
  - id: off
    type: webhook
    disabled: true
    config: {url: "http://127.0.0.1:1/in", allow_private_networks: true}
`, gh+"/")), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: memStore(t), AdminToken: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	gw.Start(context.Background())
	api := server.AdminHandler(gw, "127.0.0.1:0")
	if _, ok := gw.Catalog().Lookup("off.post"); ok {
		t.Errorf("a disabled instance's tool is in the catalog")
	}

	var c admin.Connector
	adminGet(t, api, "/admin/v1/connectors/gh", token, &c)
	if c.Status != admin.StatusActive || c.Circuit != "closed" || c.Environment != "production" || c.AdapterVersion != "1.0.0" || c.APIVersion != ghcore.APIVersion {
		t.Fatalf("a new instance's record: %+v", c.ConnectorRecord)
	}
	if c.Scopes == nil || c.Scopes.Known || !slices.Equal(c.Scopes.Needs, []string{"repo", "workflow"}) || len(c.Config) == 0 {
		t.Fatalf("before a test, scopes %+v, config %s", c.Scopes, c.Config)
	}

	// The test learns the token's scopes: workflow, which rerun needs, is missing.
	req := httptest.NewRequest(http.MethodPost, "/admin/v1/connectors/gh/test", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	api.ServeHTTP(httptest.NewRecorder(), req)
	adminGet(t, api, "/admin/v1/connectors/gh", token, &c)
	if s := c.Scopes; s == nil || !s.Known || !slices.Equal(s.Has, []string{"read:org", "repo"}) || !slices.Equal(s.Missing, []string{"workflow"}) {
		t.Fatalf("scopes after the test: %+v", c.Scopes)
	}
	if c.Status != admin.StatusDegraded || !slices.ContainsFunc(c.StatusReasons, func(r string) bool { return strings.Contains(r, "missing scopes: workflow") }) {
		t.Fatalf("missing scopes, status %s %q", c.Status, c.StatusReasons)
	}

	// The provider fails: 5 failures in a row (the default) open the circuit.
	failing.Store(true)
	args := json.RawMessage(`{"repo":"acme/api","number":1}`)
	for i := range 5 {
		res, err := gw.Call(context.Background(), "gh.get_issue", args, server.CallOptions{})
		if err != nil || !res.IsError || !strings.Contains(toolText(res), "TRANSIENT") {
			t.Fatalf("failure %d: %v %s", i+1, err, toolText(res))
		}
	}
	before := hits.Load()
	res, err := gw.Call(context.Background(), "gh.get_issue", args, server.CallOptions{})
	if err != nil || !res.IsError || !strings.Contains(toolText(res), "UPSTREAM_UNAVAILABLE") || !strings.Contains(toolText(res), "circuit is open") {
		t.Fatalf("a call with the circuit open: %v %s", err, toolText(res))
	}
	if hits.Load() != before {
		t.Fatalf("the provider was called with the circuit open")
	}
	adminGet(t, api, "/admin/v1/connectors/gh", token, &c)
	if c.Circuit != "open" || c.Status != admin.StatusDegraded || c.RetryAt.IsZero() || !strings.Contains(c.LastFailure, "TRANSIENT") ||
		!slices.ContainsFunc(c.StatusReasons, func(r string) bool { return strings.Contains(r, "circuit open") }) {
		t.Fatalf("the record with the circuit open: %+v", c.ConnectorRecord)
	}
	var list struct {
		Connectors []admin.Connector `json:"connectors"`
	}
	adminGet(t, api, "/admin/v1/connectors", token, &list)
	i := slices.IndexFunc(list.Connectors, func(c admin.Connector) bool { return c.ID == "off" })
	if len(list.Connectors) != 2 || i < 0 || list.Connectors[i].Status != admin.StatusDisabled {
		t.Fatalf("the list: %+v", list.Connectors)
	}

	var status admin.Status
	adminGet(t, api, "/admin/v1/status", token, &status)
	if i := slices.IndexFunc(status.Connectors, func(c admin.ConnectorState) bool { return c.ID == "gh" }); i < 0 ||
		status.Connectors[i].Status != admin.StatusDegraded || status.Connectors[i].Circuit != "open" {
		t.Errorf("the status's connectors: %+v", status.Connectors)
	}

	cl, base, _ := panelClient(t, gw, token)
	resp, err := cl.Get(base + "/connectors")
	if err != nil {
		t.Fatal(err)
	}
	page := readAll(t, resp)
	for _, want := range []string{"degraded", "circuit open", ">open", "production", "adapter 1.0.0", "API " + ghcore.APIVersion, "missing: <span class=\"bad\">workflow</span>", "has: read:org repo", "needs: repo workflow", "disabled"} {
		if !strings.Contains(page, want) {
			t.Errorf("the connectors page lacks %q", want)
		}
	}

	url := serve(t, gw)
	mresp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	if !strings.Contains(string(metrics), `legate_connector_circuit_state{connector="gh"} 2`) {
		t.Errorf("/metrics lacks the open circuit of gh")
	}
}

// toolText is a result as JSON, its text and error code in it.
func toolText(res any) string {
	b, _ := json.Marshal(res)
	return string(b)
}
