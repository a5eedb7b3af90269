package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/agent"
	"github.com/legate-mcp/legate/agent/agenttest"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/store"
)

const approveWrites = "policy:\n  defaults: {read: allow, draft: allow, write: approve, destructive: approve}\napprovals:\n  wait: 100ms\n"

// waitingRun waits until the history shows a run paused for an approval,
// and returns that approval's id.
func waitingRun(t *testing.T, h *harness, done <-chan *agent.Record) string {
	t.Helper()
	for {
		select {
		case rec := <-done:
			t.Fatalf("the run ended without pausing: %+v", rec)
		case <-time.After(20 * time.Millisecond):
		}
		runs, err := h.st.AgentRuns().List(context.Background(), store.AgentRunFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 1 {
			if rec := h.history(runs[0].ID); rec.Waiting != nil {
				if rec.Stopped != agent.Running || rec.Waiting.Tool != "host__fs_write" {
					t.Fatalf("a paused run: stopped %q waiting %+v", rec.Stopped, rec.Waiting)
				}
				return rec.Waiting.ApprovalID
			}
		}
	}
}

func TestApprovalPausesTheRun(t *testing.T) {
	write := agenttest.Step{Calls: []agenttest.ToolCall{agenttest.Call("host__fs_write", `{"path":"hello.txt","content":"hi\n"}`)}}

	t.Run("approved, the run goes on", func(t *testing.T) {
		h := newHarness(t, options{extra: approveWrites}, write, agenttest.Step{Text: "Wrote hello.txt."})
		done := make(chan *agent.Record, 1)
		go func() { done <- h.run(agent.Request{Instruction: "Write hello.txt."}) }()
		id := waitingRun(t, h, done)
		if _, err := os.Stat(filepath.Join(h.workspace, "hello.txt")); !os.IsNotExist(err) {
			t.Fatalf("hello.txt exists before the approval: %v", err)
		}
		// As `legate approvals approve ID` does, on the shared store.
		if _, err := policy.NewInbox(h.st.Approvals(), h.cfg.Approvals).Decide(context.Background(), id, true, "cli:ops", ""); err != nil {
			t.Fatal(err)
		}
		rec := <-done
		if got := h.read("hello.txt"); got != "hi\n" {
			t.Errorf("hello.txt = %q", got)
		}
		if rec.Stopped != agent.StoppedAnswered || rec.Waiting != nil || len(rec.Calls) != 1 || rec.Calls[0].ApprovalID != id || rec.Calls[0].IsError {
			t.Errorf("record: stopped %q waiting %+v calls %+v", rec.Stopped, rec.Waiting, rec.Calls)
		}
	})

	t.Run("approved while the call waits in the call path", func(t *testing.T) {
		// approvals.wait (30s) is longer than the test: the call is still
		// held when the history shows the run paused and it is approved.
		h := newHarness(t, options{extra: strings.Replace(approveWrites, "  wait: 100ms\n", "  wait: 10m\n", 1)}, write, agenttest.Step{Text: "Wrote hello.txt."})
		done := make(chan *agent.Record, 1)
		go func() { done <- h.run(agent.Request{Instruction: "Write hello.txt."}) }()
		id := waitingRun(t, h, done)
		if _, err := policy.NewInbox(h.st.Approvals(), h.cfg.Approvals).Decide(context.Background(), id, true, "cli:ops", ""); err != nil {
			t.Fatal(err)
		}
		rec := <-done
		if got := h.read("hello.txt"); got != "hi\n" {
			t.Errorf("hello.txt = %q", got)
		}
		if rec.Stopped != agent.StoppedAnswered || rec.Waiting != nil || len(rec.Calls) != 1 || rec.Calls[0].ApprovalID != id || rec.Calls[0].IsError {
			t.Errorf("record: stopped %q waiting %+v calls %+v", rec.Stopped, rec.Waiting, rec.Calls)
		}
	})

	t.Run("denied, the model sees the denial and answers", func(t *testing.T) {
		h := newHarness(t, options{extra: approveWrites}, write, agenttest.Step{Text: "I could not write hello.txt: the write was denied."})
		done := make(chan *agent.Record, 1)
		go func() { done <- h.run(agent.Request{Instruction: "Write hello.txt."}) }()
		id := waitingRun(t, h, done)
		if _, err := policy.NewInbox(h.st.Approvals(), h.cfg.Approvals).Decide(context.Background(), id, false, "cli:ops", "not on a Friday"); err != nil {
			t.Fatal(err)
		}
		rec := <-done
		if _, err := os.Stat(filepath.Join(h.workspace, "hello.txt")); !os.IsNotExist(err) {
			t.Errorf("hello.txt written despite the denial: %v", err)
		}
		if rec.Stopped != agent.StoppedAnswered || len(rec.Calls) != 1 || !rec.Calls[0].IsError || !strings.Contains(rec.Calls[0].Result, "not on a Friday") {
			t.Errorf("record: stopped %q calls %+v", rec.Stopped, rec.Calls)
		}
		reqs := h.model.Requests()
		if b, _ := json.Marshal(reqs[len(reqs)-1]["messages"]); !strings.Contains(string(b), "APPROVAL_DENIED") || !strings.Contains(string(b), "not on a Friday") {
			t.Errorf("the model was not shown the denial: %s", b)
		}
	})

	t.Run("still held in the call path at the deadline", func(t *testing.T) {
		h := newHarness(t, options{extra: strings.Replace(approveWrites, "  wait: 100ms\n", "  wait: 10m\n", 1), agent: "  deadline: 2500ms\n"}, write)
		rec := h.run(agent.Request{Instruction: "Write hello.txt."})
		if rec.Stopped != agent.StoppedDeadline || len(rec.Calls) != 1 || rec.Calls[0].ApprovalID == "" || !strings.Contains(rec.Calls[0].Result, "not decided before the run's deadline") {
			t.Errorf("record: stopped %q error %q calls %+v", rec.Stopped, rec.Error, rec.Calls)
		}
	})

	t.Run("undecided, the run stops at its deadline", func(t *testing.T) {
		h := newHarness(t, options{extra: approveWrites, agent: "  deadline: 500ms\n"}, write)
		rec := h.run(agent.Request{Instruction: "Write hello.txt."})
		if rec.Stopped != agent.StoppedDeadline || len(rec.Calls) != 1 || rec.Calls[0].ApprovalID == "" || !rec.Calls[0].IsError {
			t.Errorf("record: stopped %q error %q calls %+v", rec.Stopped, rec.Error, rec.Calls)
		}
		if got := h.history(rec.ID); got.Stopped != agent.StoppedDeadline {
			t.Errorf("history: stopped %q", got.Stopped)
		}
	})
}

func TestMaxTurnsAndResume(t *testing.T) {
	list := agenttest.Step{Calls: []agenttest.ToolCall{agenttest.Call("host__fs_list", `{}`)}}
	h := newHarness(t, options{}, list, list, list, agenttest.Step{Text: "There is one file, a.txt."})
	h.write("a.txt", "a\n")
	rec := h.run(agent.Request{Instruction: "List the workspace.", MaxTurns: 3})
	if rec.Stopped != agent.StoppedMaxTurns || rec.Turns != 3 || len(rec.Calls) != 3 || len(h.model.Requests()) != 3 {
		t.Fatalf("record: stopped %q turns %d calls %d", rec.Stopped, rec.Turns, len(rec.Calls))
	}
	// Every call of the last turn was run and answered: the conversation
	// ends with a tool result, ready to go on.
	if last := rec.Messages[len(rec.Messages)-1]; last.Role != "tool" || !strings.Contains(last.Content, "a.txt") {
		t.Fatalf("last message %+v", last)
	}

	resumed := h.run(agent.Request{Instruction: "Now say what you found.", Resume: rec.ID})
	if resumed.Stopped != agent.StoppedAnswered || resumed.ResumedFrom != rec.ID || resumed.Reply != "There is one file, a.txt." || resumed.Turns != 1 {
		t.Fatalf("resumed: %+v", resumed)
	}
	if len(resumed.Messages) != len(rec.Messages)+2 {
		t.Errorf("resumed conversation has %d messages, want the %d before, the instruction and the answer", len(resumed.Messages), len(rec.Messages))
	}
	reqs := h.model.Requests()
	sent, _ := reqs[3]["messages"].([]any)
	if len(sent) != 1+len(rec.Messages)+1 { // system, the conversation before, the new instruction
		t.Errorf("the resumed request sent %d messages, want %d", len(sent), len(rec.Messages)+2)
	}
	if b, _ := json.Marshal(sent[len(sent)-1]); !strings.Contains(string(b), "Now say what you found.") {
		t.Errorf("last message sent: %s", b)
	}
	// Another principal cannot resume it.
	if _, err := h.runner.Run(context.Background(), agent.Request{Instruction: "go on", Resume: rec.ID, Caller: "mallory"}); err == nil {
		t.Error("a run of local resumed by mallory")
	}
}
