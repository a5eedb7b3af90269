package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDiscoveryBySearch: a client of a `discovery: search` profile (the TypeScript SDK) lists
// two tools, searches, is told its list changed, lists the tool found, and calls it; the call
// takes the call path (policy decided, audit row written).
func TestDiscoveryBySearch(t *testing.T) {
	p := need(t)
	t.Parallel()
	work := t.TempDir()
	config := filepath.Join(work, "config.yaml")
	yaml := fmt.Sprintf(`upstreams:
  - id: mem
    description: What the agent remembers, as a knowledge graph
    command: %s
    env: {MEMORY_FILE_PATH: %q}
profile: agent
profiles:
  - {name: agent, discovery: search}
policy:
  rules:
    - {tool: "mcp.mem.read_graph", action: allow}
`, yamlFlow(p.node, p.memory), filepath.Join(work, "memory.jsonl"))
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	s := serveState(t, config, state)
	script := filepath.Join(filepath.Dir(p.client), "discovery.mjs")
	stdout, stderr, err := p.runNode(t, t.TempDir(), nil, script, s.url("127.0.0.1"), "show everything remembered in the knowledge graph", "{}")
	if err != nil {
		t.Fatalf("discovery.mjs: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	var out struct {
		First, Found, Second []string
		Changed              bool
		Call                 struct {
			IsError bool `json:"isError"`
			Error   any  `json:"error"`
		}
	}
	if err := json.Unmarshal(stdout, &out); err != nil {
		t.Fatalf("discovery.mjs: %v\n%s", err, stdout)
	}
	if want := []string{"legate__approval_status", "legate__search_tools"}; !slices.Equal(out.First, want) {
		t.Errorf("the first list is %v, want %v", out.First, want)
	}
	if len(out.Found) == 0 || out.Found[0] != "mcp__mem__read_graph" {
		t.Fatalf("the search found %v, want mcp__mem__read_graph first\n%s", out.Found, stdout)
	}
	if !out.Changed {
		t.Error("no notifications/tools/list_changed after the search")
	}
	if len(out.Second) != 2+len(out.Found) || !slices.Contains(out.Second, "mcp__mem__read_graph") {
		t.Errorf("the second list is %v, want the first and %v", out.Second, out.Found)
	}
	if out.Call.IsError || out.Call.Error != nil {
		t.Errorf("calling the found tool: %s", stdout)
	}
	rows := legateRun(t, nil, "audit", "query", "--tool", "mcp.mem.read_graph", "-o", "json", "--config", config, "--state-dir", state)
	if !strings.Contains(string(rows), `"decision": "allow"`) || !strings.Contains(string(rows), `"rule"`) {
		t.Errorf("the call's audit row, with the policy's decision and rule:\n%s", rows)
	}
}
