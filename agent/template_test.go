package agent_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/agent"
	"github.com/legate-mcp/legate/agent/agenttest"
)

func TestRender(t *testing.T) {
	var root any
	json.Unmarshal([]byte(`{"batch": 7, "owner": {"name": "ops"}, "tasks": [{"id": "a", "goal": "write a.txt"}, {"id": "b", "goal": "write b.txt"}]}`), &root)
	this := root.(map[string]any)["tasks"].([]any)[1]
	for tmpl, want := range map[string]string{
		"{{$this.goal}} for {{ $.owner.name }}":     "write b.txt for ops",
		"batch {{$.batch}}, task {{$.tasks[0].id}}": "batch 7, task a",
		"{{$this}}":                `{"goal":"write b.txt","id":"b"}`,
		"no placeholder {not one}": "no placeholder {not one}",
		"run-{{$this.id}}/out":     "run-b/out",
	} {
		got, err := agent.Render(tmpl, root, this)
		if err != nil || got != want {
			t.Errorf("Render(%q) = %q, %v; want %q", tmpl, got, err, want)
		}
	}
	for _, bad := range []string{"{{$.nope}}", "{{$this.goal.deeper}}", "{{$.tasks[5]}}", "{{$owner}}"} {
		if got, err := agent.Render(bad, root, this); err == nil {
			t.Errorf("Render(%q) = %q, want an error", bad, got)
		}
	}
	if elems, err := agent.Scope(root, "$.tasks[*]"); err != nil || len(elems) != 2 {
		t.Errorf("Scope $.tasks[*]: %v %v", elems, err)
	}
	if _, err := agent.Scope(root, "$.owner[*]"); err == nil {
		t.Error("Scope over an object: no error")
	}
}

// Scoped to an array, the instruction runs once per element, each run
// continuing the one before unless fresh.
func TestRunEachElement(t *testing.T) {
	var ctx any
	json.Unmarshal([]byte(`{"batch": 7, "tasks": [{"id": "a", "goal": "Write a.txt."}, {"id": "b", "goal": "Write b.txt."}]}`), &ctx)
	for _, fresh := range []bool{false, true} {
		h := newHarness(t, options{},
			agenttest.Step{Calls: []agenttest.ToolCall{agenttest.Call("host__fs_write", `{"path":"run-a/a.txt","content":"a"}`)}}, agenttest.Step{Text: "a done"},
			agenttest.Step{Calls: []agenttest.ToolCall{agenttest.Call("host__fs_write", `{"path":"run-b/b.txt","content":"b"}`)}}, agenttest.Step{Text: "b done"},
		)
		recs, err := h.runner.RunEach(t.Context(), agent.Request{Instruction: "{{$this.goal}} (batch {{$.batch}})", Workspace: "run-{{$this.id}}", Caller: "local"}, ctx, "$.tasks[*]", fresh)
		if err != nil || len(recs) != 2 {
			t.Fatalf("fresh %v: %d runs, %v", fresh, len(recs), err)
		}
		if recs[0].Instruction != "Write a.txt. (batch 7)" || recs[1].Instruction != "Write b.txt. (batch 7)" || recs[0].Workspace != "run-a" || recs[1].Workspace != "run-b" {
			t.Errorf("fresh %v: rendered %q %q %q %q", fresh, recs[0].Instruction, recs[1].Instruction, recs[0].Workspace, recs[1].Workspace)
		}
		if h.read("run-a/a.txt") != "a" || h.read("run-b/b.txt") != "b" {
			t.Errorf("fresh %v: the files of the runs", fresh)
		}
		sent, _ := json.Marshal(h.model.Requests()[2]["messages"])
		continued := strings.Contains(string(sent), "Write a.txt.")
		if fresh == continued || (recs[1].ResumedFrom == recs[0].ID) == fresh {
			t.Errorf("fresh %v: the second run continued the first: %v (resumed from %q)", fresh, continued, recs[1].ResumedFrom)
		}
	}
}
