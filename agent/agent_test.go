package agent_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/agent"
	"github.com/legate-mcp/legate/agent/agenttest"
)

// editScript reads notes.txt, edits it and writes a report, then answers.
func editScript() []agenttest.Step {
	return []agenttest.Step{
		{Text: "Reading the notes first.", Calls: []agenttest.ToolCall{agenttest.Call("host__fs_read", `{"path":"notes.txt"}`)}},
		{Calls: []agenttest.ToolCall{
			agenttest.Call("host__fs_edit", `{"path":"notes.txt","old_string":"status: draft","new_string":"status: final"}`),
			agenttest.Call("host__fs_write", `{"path":"out/report.md","content":"# Report\nThe notes are final.\n"}`),
		}},
		{Text: "Marked notes.txt final and wrote out/report.md."},
	}
}

func TestRunEditsTheWorkspaceThroughTheHostTools(t *testing.T) {
	for _, provider := range []string{"openai-compatible", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			h := newHarness(t, options{provider: provider}, editScript()...)
			h.write("notes.txt", "title: notes\nstatus: draft\n")
			rec := h.run(agent.Request{Instruction: "Mark the notes final and write a report."})

			if got := h.read("notes.txt"); got != "title: notes\nstatus: final\n" {
				t.Errorf("notes.txt = %q: the edit did not reach the file", got)
			}
			if got := h.read("out/report.md"); got != "# Report\nThe notes are final.\n" {
				t.Errorf("out/report.md = %q", got)
			}
			if rec.Stopped != agent.StoppedAnswered || rec.Turns != 3 || rec.Reply != "Marked notes.txt final and wrote out/report.md." {
				t.Errorf("record: stopped %q turns %d reply %q", rec.Stopped, rec.Turns, rec.Reply)
			}
			var tools []string
			for _, c := range rec.Calls {
				if c.IsError {
					t.Errorf("call %s failed: %s", c.Tool, c.Result)
				}
				tools = append(tools, c.Tool)
			}
			if want := []string{"host__fs_read", "host__fs_edit", "host__fs_write"}; !slices.Equal(tools, want) {
				t.Errorf("calls %v, want %v", tools, want)
			}
			if !slices.Equal(rec.ToolsUsed, []string{"host__fs_read", "host__fs_edit", "host__fs_write"}) {
				t.Errorf("tools_used %v", rec.ToolsUsed)
			}
			if !strings.Contains(rec.Calls[0].Result, "status: draft") {
				t.Errorf("fs_read's result %q does not hold the file", rec.Calls[0].Result)
			}
			if rec.Usage.InputTokens != 300 || rec.Usage.OutputTokens != 30 || rec.Retries != 0 {
				t.Errorf("usage %+v retries %d", rec.Usage, rec.Retries)
			}
			if rec.Workspace != h.workspace || rec.Host == "" || rec.Principal != "local" || rec.Model != provider+"/scripted-1" {
				t.Errorf("record: workspace %q host %q principal %q model %q", rec.Workspace, rec.Host, rec.Principal, rec.Model)
			}
			// The model saw the file in the second request.
			reqs := h.model.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d model requests, want 3", len(reqs))
			}
			if b, _ := json.Marshal(reqs[1]["messages"]); !strings.Contains(string(b), "status: draft") {
				t.Errorf("the second request does not carry fs_read's result: %s", b)
			}
			// Tools offered: the host's, not the agent itself.
			if b, _ := json.Marshal(reqs[0]["tools"]); !strings.Contains(string(b), "host__fs_write") || strings.Contains(string(b), "agent") {
				t.Errorf("tools offered: %s", b)
			}
			// The history keeps the same record.
			if got := h.history(rec.ID); !reflect.DeepEqual(got.Calls, rec.Calls) || got.Stopped != rec.Stopped || len(got.Messages) != len(rec.Messages) {
				t.Errorf("history differs from the record:\n%+v\n%+v", got, rec)
			}
		})
	}
}
