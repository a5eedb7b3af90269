package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/agent"
	"github.com/legate-mcp/legate/agent/agenttest"
)

// A run whose write is held for approval pauses; `legate approvals
// approve` resumes it; the history shows it; --resume continues it.
func TestAgentRunApprovedThroughTheCLI(t *testing.T) {
	model := agenttest.NewServer(t,
		agenttest.Step{Calls: []agenttest.ToolCall{agenttest.Call("host__fs_write", `{"path":"hello.txt","content":"hi\n"}`)}},
		agenttest.Step{Text: "Wrote hello.txt."},
		agenttest.Step{Text: "I wrote hello.txt, holding hi."},
	)
	work, state := t.TempDir(), t.TempDir()
	cfg := writeConfig(t, `policy:
  defaults: {read: allow, draft: allow, write: approve, destructive: approve}
approvals:
  wait: 100ms
connectors:
  - id: host
    type: host
    config: {workspace_root: `+work+`, skills_dir: `+filepath.Join(state, "skills")+`}
agent:
  model: {provider: openai-compatible, url: "`+model.URL+`", model: scripted-1}
  connectors: [host]
`)
	cli := func(args ...string) (string, error) {
		return runCLI(t, append(args, "--config", cfg, "--state-dir", state)...)
	}
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := cli("agent", "run", "Write hello.txt saying hi.", "--json")
		done <- result{out, err}
	}()

	var id, approval string
	for approval == "" {
		select {
		case r := <-done:
			t.Fatalf("the run ended without pausing: %v\n%s", r.err, r.out)
		case <-time.After(50 * time.Millisecond):
		}
		out, err := cli("agent", "history", "-o", "json")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var runs []struct{ ID string }
		if json.Unmarshal([]byte(out), &runs) != nil || len(runs) == 0 {
			continue
		}
		id = runs[0].ID
		out, err = cli("agent", "show", id, "-o", "json")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var rec agent.Record
		if err := json.Unmarshal([]byte(out), &rec); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if rec.Waiting != nil {
			approval = rec.Waiting.ApprovalID
		}
	}
	if _, err := os.Stat(filepath.Join(work, "hello.txt")); !os.IsNotExist(err) {
		t.Fatalf("hello.txt exists before the approval: %v", err)
	}
	if out, err := cli("approvals", "approve", approval); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.out)
	}
	var rec agent.Record
	if err := json.Unmarshal([]byte(r.out), &rec); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if b, err := os.ReadFile(filepath.Join(work, "hello.txt")); err != nil || string(b) != "hi\n" {
		t.Fatalf("hello.txt: %q, %v", b, err)
	}
	if rec.ID != id || rec.Stopped != agent.StoppedAnswered || rec.Reply != "Wrote hello.txt." || len(rec.Calls) != 1 || rec.Calls[0].ApprovalID != approval {
		t.Fatalf("record %+v", rec)
	}
	out, err := cli("agent", "show", id)
	if err != nil || !strings.Contains(out, "answered") || !strings.Contains(out, "host__fs_write") {
		t.Fatalf("show: %v\n%s", err, out)
	}
	out, err = cli("agent", "run", "What did you write?", "--resume", id)
	if err != nil || !strings.Contains(out, "I wrote hello.txt, holding hi.") || !strings.Contains(out, "stopped answered") {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	reqs := model.Requests()
	if sent, _ := reqs[2]["messages"].([]any); len(sent) != 1+len(rec.Messages)+1 {
		t.Errorf("the resumed run sent %d messages, want the system prompt, the %d before and the new instruction", len(sent), len(rec.Messages))
	}
}

// A run that fails exits non-zero, naming how it stopped.
func TestAgentRunFailureExitsNonZero(t *testing.T) {
	model := agenttest.NewServer(t, agenttest.Step{Status: 401})
	cfg := writeConfig(t, `agent:
  model: {provider: openai-compatible, url: "`+model.URL+`", model: scripted-1}
`)
	out, err := runCLI(t, "agent", "run", "Do something.", "--config", cfg, "--state-dir", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "stopped error") || !strings.Contains(err.Error(), "401") {
		t.Fatalf("err %v\n%s", err, out)
	}
}

// --context and --scope: one run per element, the instruction rendered.
func TestAgentRunEachElementFromTheCLI(t *testing.T) {
	model := agenttest.NewServer(t, agenttest.Step{Text: "did A"}, agenttest.Step{Text: "did B"})
	cfg := writeConfig(t, `agent:
  model: {provider: openai-compatible, url: "`+model.URL+`", model: scripted-1}
`)
	out, err := runCLI(t, "agent", "run", "Do {{$this.goal}} for {{$.team}}.", "--context", `{"team":"ops","tasks":[{"goal":"A"},{"goal":"B"}]}`,
		"--scope", "$.tasks[*]", "--fresh", "--json", "--config", cfg, "--state-dir", t.TempDir())
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var recs []agent.Record
	if err := json.Unmarshal([]byte(out), &recs); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(recs) != 2 || recs[0].Instruction != "Do A for ops." || recs[1].Instruction != "Do B for ops." || recs[1].Reply != "did B" || recs[1].ResumedFrom != "" {
		t.Fatalf("runs: %+v", recs)
	}
}
