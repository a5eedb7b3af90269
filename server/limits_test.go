package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
)

// limitedGateway is the echo gateway of testConfig with limits, its store
// and its /mcp URL.
func limitedGateway(t *testing.T, limits string) (*server.Gateway, store.Store, string) {
	t.Helper()
	t.Setenv("LEGATE_TEST_KEY", "s3cret")
	cfg, err := config.Parse([]byte(testConfig+limits), nil)
	if err != nil {
		t.Fatal(err)
	}
	st := memStore(t)
	gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	gw.Start(context.Background())
	return gw, st, serve(t, gw)
}

// callAs calls tool as principal and returns the error code of its
// result ("" for a success) and its retry_after_seconds.
func callAs(t *testing.T, gw *server.Gateway, principal, tool string) (string, float64) {
	t.Helper()
	res, err := gw.Call(context.Background(), tool, json.RawMessage(`{"text":"x"}`), server.CallOptions{Caller: connectors.Caller{Principal: principal}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError {
		return "", 0
	}
	e := gatewayError(t, res)
	after, _ := e["retry_after_seconds"].(float64)
	return fmt.Sprint(e["code"]), after
}

func TestRateLimitPerPrincipal(t *testing.T) {
	gw, st, url := limitedGateway(t, "limits:\n  per_principal: {per_second: 0.01, burst: 2}\n")
	for i := range 2 {
		if code, _ := callAs(t, gw, "alice", "e.echo"); code != "" {
			t.Fatalf("call %d within the burst: %s", i+1, code)
		}
	}
	code, after := callAs(t, gw, "alice", "e.echo")
	if code != "RATE_LIMITED" || after <= 0 || after > 100 {
		t.Fatalf("third call: %s, retry after %gs", code, after)
	}
	if code, _ := callAs(t, gw, "bob", "e.echo"); code != "" {
		t.Fatalf("another principal: %s", code)
	}

	// Through MCP too, where the principal is the configured one.
	cs := connect(t, url, "2025-11-25")
	for i := range 3 {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: wire("e.echo"), Arguments: map[string]any{"text": "x"}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		if limited := strings.Contains(string(b), `"retry_after_seconds"`) && strings.Contains(string(b), "RATE_LIMITED"); limited != (i == 2) || res.IsError != (i == 2) {
			t.Errorf("MCP call %d: %s", i+1, b)
		}
	}

	// The refused calls are audited and counted.
	var rows []store.AuditRow
	waitFor(t, "seven audit rows", func() bool {
		rows, _ = st.Audit().Query(context.Background(), store.AuditQuery{})
		return len(rows) == 7
	})
	limited := map[string]int{}
	for _, r := range rows {
		if r.Outcome == "RATE_LIMITED" {
			limited[r.Principal]++
			if r.Tool != "e.echo" || r.Decision != "" {
				t.Errorf("refused row: %+v", r)
			}
		}
	}
	if limited["alice"] != 1 || limited["local"] != 1 || len(limited) != 2 {
		t.Errorf("refused rows by principal: %v", limited)
	}
	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `legate_rate_limited_total{tool="e.echo"} 2`; !strings.Contains(string(b), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}

func TestRateLimitPerTool(t *testing.T) {
	gw, _, _ := limitedGateway(t, "limits:\n  per_tool: {per_second: 0.01, burst: 1}\n")
	if code, _ := callAs(t, gw, "alice", "e.echo"); code != "" {
		t.Fatalf("first call: %s", code)
	}
	if code, after := callAs(t, gw, "bob", "e.echo"); code != "RATE_LIMITED" || after <= 0 {
		t.Fatalf("the tool's second call, by another principal: %s, retry after %gs", code, after)
	}
	if code, _ := callAs(t, gw, "bob", "e.fail"); code == "RATE_LIMITED" {
		t.Fatal("another tool was limited")
	}
}

func TestRateLimitToolRule(t *testing.T) {
	gw, _, _ := limitedGateway(t, `limits:
  per_tool: {per_second: 0.01, burst: 1}
  tools:
    - {match: "e.ech*", per_second: 0.01, burst: 3}
    - {match: "e.*", per_second: 1000, burst: 1000}
`)
	for i := range 3 {
		if code, _ := callAs(t, gw, "alice", "e.echo"); code != "" {
			t.Fatalf("call %d within the rule's burst: %s", i+1, code)
		}
	}
	if code, after := callAs(t, gw, "alice", "e.echo"); code != "RATE_LIMITED" || after <= 0 {
		t.Fatalf("past the rule's burst: %s, retry after %gs", code, after)
	}
	// e.fail matches the second rule, not per_tool's burst of 1.
	for i := range 5 {
		if code, _ := callAs(t, gw, "alice", "e.fail"); code == "RATE_LIMITED" {
			t.Fatalf("e.fail call %d was limited", i+1)
		}
	}
	// A tool no rule matches takes per_tool.
	callAs(t, gw, "alice", "http.request")
	if code, _ := callAs(t, gw, "alice", "http.request"); code != "RATE_LIMITED" {
		t.Fatalf("http.request's second call: %s", code)
	}
}
