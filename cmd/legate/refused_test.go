package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

// Calls refused before they run (a policy deny, an unknown tool, a
// quarantined one) each leave one call row naming their principal; the
// quarantine itself, which a CLI command only reads from the cache, leaves
// no event row however many commands run.
func TestRefusedCallsAreAuditedWithTheirPrincipal(t *testing.T) {
	state := t.TempDir()
	cfg := writeConfig(t, `
principal: ops-bot
policy:
  rules:
    - {tool: "http.request", action: deny, reason: "no fetching here"}
upstreams:
  - {id: held, url: "http://127.0.0.1:1/mcp", pin: strict}
`)
	st, err := sqlite.Open(context.Background(), state)
	if err != nil {
		t.Fatal(err)
	}
	tools := []store.CachedTool{{Name: "echo", Definition: json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"}}`), Hash: "h1"}}
	if err := st.Upstreams().SaveCache(context.Background(), "held", tools, nil, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	st.Close()
	flags := []string{"--config", cfg, "--state-dir", state}
	for _, args := range [][]string{
		{"tools", "call", "http.request", "--args", `{"url":"https://example.com/"}`},
		{"tools", "call", "no.such_tool"},
		{"tools", "call", "mcp.held.echo"},
		{"tools", "call", "mcp__held__echo"},
		{"tools", "list"},
		{"upstream", "list"},
	} {
		runCLISplit(t, append(args, flags...)...) // the calls fail: they are refused
	}
	out, _, err := runCLISplit(t, append([]string{"audit", "query", "-o", "json"}, flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	var rows []store.AuditRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]int{}
	for _, r := range rows {
		if r.Outcome == "QUARANTINED" {
			t.Errorf("a CLI command wrote the quarantine event: %+v", r)
			continue
		}
		if r.Principal != "ops-bot" {
			t.Errorf("row without its principal: %+v", r)
		}
		got[r.Tool+" "+r.Decision+" "+r.Outcome]++
	}
	want := map[string]int{
		"http.request deny POLICY_DENIED":         1,
		"no.such_tool  UNKNOWN_TOOL":              1,
		"mcp.held.echo quarantined POLICY_DENIED": 2,
	}
	if len(got) != len(want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%q: %d rows, want %d (all: %v)", k, got[k], n, got)
		}
	}
}
