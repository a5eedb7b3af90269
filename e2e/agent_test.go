package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/agent/agenttest"
)

// legate.agent.run called by the TypeScript SDK client against "legate
// serve": the run edits the workspace through the host tools, the record
// comes back as structured content, and the audit log has the run's own
// calls under the caller's principal, beside the run.
func TestAgentRunOverTypeScriptSDK(t *testing.T) {
	p := need(t)
	t.Parallel()
	model := agenttest.NewServer(t,
		agenttest.Step{Text: "Reading it.", Calls: []agenttest.ToolCall{agenttest.Call("host__fs_read", `{"path":"todo.txt"}`)}},
		agenttest.Step{Calls: []agenttest.ToolCall{agenttest.Call("host__fs_edit", `{"path":"todo.txt","old_string":"[ ] ship","new_string":"[x] ship"}`)}},
		agenttest.Step{Text: "Ticked ship in todo.txt."},
	)
	work, state := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "todo.txt"), []byte("[ ] ship\n[ ] rest\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte(`principal: flow-runner
policy:
  defaults: {read: allow, draft: allow, write: allow, destructive: allow}
connectors:
  - id: host
    type: host
    config: {workspace_root: `+work+`, skills_dir: `+filepath.Join(state, "skills")+`}
agent:
  model: {provider: openai-compatible, url: "`+model.URL+`", model: scripted-1}
  connectors: [host]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := serveState(t, config, state)
	r, out := p.tsClient(t, nil, "--http", s.url("127.0.0.1"), "--call", "legate__agent__run", `{"instruction":"Tick ship in todo.txt."}`)
	if !slices.Contains(r.Tools, "legate__agent__run") {
		t.Fatalf("tools/list lacks legate__agent__run: %v", r.Tools)
	}
	res := tsResultOf(t, r, 0, out)
	if res.IsError {
		t.Fatalf("legate.agent.run failed:\n%s", out)
	}
	rec := res.StructuredContent
	if rec["stopped"] != "answered" || rec["reply"] != "Ticked ship in todo.txt." || rec["principal"] != "flow-runner" || rec["turns"] != float64(3) {
		t.Fatalf("record: %s", out)
	}
	calls, _ := rec["calls"].([]any)
	if len(calls) != 2 {
		t.Fatalf("calls %v, want fs_read and fs_edit", calls)
	}
	if b, err := os.ReadFile(filepath.Join(work, "todo.txt")); err != nil || string(b) != "[x] ship\n[ ] rest\n" {
		t.Fatalf("todo.txt: %q, %v", b, err)
	}

	// The audit log: the run and its calls, all under flow-runner.
	want := []string{"legate.agent.run", "host.fs_read", "host.fs_edit"}
	var tools []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(200 * time.Millisecond) { // rows are written in batches every 200 ms
		tools = nil
		for _, row := range jsonLines(t, string(legateRun(t, nil, "audit", "query", "--principal", "flow-runner", "-o", "jsonl", "--config", config, "--state-dir", state))) {
			tools = append(tools, row["tool"].(string))
		}
		if !slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(tools, w) }) || time.Now().After(deadline) {
			break
		}
	}
	for _, w := range want {
		if !slices.Contains(tools, w) {
			t.Errorf("audit rows of flow-runner: %v, want %s among them", tools, w)
		}
	}
	// The history has the run.
	var hist []map[string]any
	if err := json.Unmarshal(legateRun(t, nil, "agent", "history", "-o", "json", "--config", config, "--state-dir", state), &hist); err != nil || len(hist) != 1 || hist[0]["id"] != rec["id"] {
		t.Errorf("agent history: %v %v", hist, err)
	}
	if !strings.HasPrefix(rec["id"].(string), "run_") {
		t.Errorf("run id %v", rec["id"])
	}
}
