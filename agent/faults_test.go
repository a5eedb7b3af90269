package agent_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/agent"
	"github.com/legate-mcp/legate/agent/agenttest"
)

// A fault met at the second turn: the run retries (or not) and the
// conversation sent again is the one sent before.
func TestModelFaults(t *testing.T) {
	read := agenttest.Step{Calls: []agenttest.ToolCall{agenttest.Call("host__fs_read", `{"path":"notes.txt"}`)}}
	done := agenttest.Step{Text: "The notes say hello."}
	cases := []struct {
		name    string
		fault   []agenttest.Step
		stopped string
		retries int
		log     string // a line the run's log must hold
	}{
		{"stall longer than the request timeout, then an answer", []agenttest.Step{{Stall: time.Minute, Text: "too late"}}, agent.StoppedAnswered, 1, "turn 2/6 attempt 1 — nothing received after"},
		{"502 from a gateway in front of the model", []agenttest.Step{{Status: 502}}, agent.StoppedAnswered, 1, "turn 2/6 attempt 1 failed"},
		{"429 with Retry-After", []agenttest.Step{{Status: 429, RetryAfter: "1"}}, agent.StoppedAnswered, 1, "trying again in 1s"},
		{"stream dropped mid-answer", []agenttest.Step{{Text: "The notes sa", Drop: true}}, agent.StoppedAnswered, 1, "turn 2/6 attempt 1 failed"},
		{"401 is a verdict, not retried", []agenttest.Step{{Status: 401}}, agent.StoppedError, 0, ""},
		{"404 is a verdict, not retried", []agenttest.Step{{Status: 404}}, agent.StoppedError, 0, ""},
		{"retries spent", []agenttest.Step{{Status: 503}, {Status: 503}, {Status: 503}, {Status: 503}}, agent.StoppedError, 3, "turn 2/6 attempt 3 failed"},
	}
	for _, provider := range []string{"openai-compatible", "anthropic"} {
		for _, c := range cases {
			t.Run(provider+"/"+c.name, func(t *testing.T) {
				script := append([]agenttest.Step{read}, c.fault...)
				if c.stopped == agent.StoppedAnswered {
					script = append(script, done)
				}
				h := newHarness(t, options{provider: provider, timeout: "1s"}, script...)
				h.write("notes.txt", "hello\n")
				rec := h.run(agent.Request{Instruction: "What do the notes say?"})
				if rec.Stopped != c.stopped || rec.Retries != c.retries {
					t.Fatalf("stopped %q retries %d (error %q), want %q and %d", rec.Stopped, rec.Retries, rec.Error, c.stopped, c.retries)
				}
				if c.stopped == agent.StoppedAnswered && rec.Reply != done.Text {
					t.Errorf("reply %q", rec.Reply)
				}
				if c.stopped == agent.StoppedError && (rec.Error == "" || rec.Reply != "") {
					t.Errorf("a failed run: error %q reply %q", rec.Error, rec.Reply)
				}
				reqs := h.model.Requests()
				if want := len(script); len(reqs) != want {
					t.Fatalf("%d model requests, want %d", len(reqs), want)
				}
				// Every attempt of turn 2 sent the conversation of turn 2.
				for i := 2; i < len(reqs) && i <= 1+len(c.fault); i++ {
					if !reflect.DeepEqual(reqs[i]["messages"], reqs[1]["messages"]) {
						t.Errorf("attempt %d sent another conversation:\n%v\n%v", i, reqs[i]["messages"], reqs[1]["messages"])
					}
				}
				// The work before the fault is kept: the call and its result.
				if len(rec.Calls) != 1 || !strings.Contains(rec.Calls[0].Result, "hello") || rec.Turns != 2 {
					t.Errorf("calls %+v turns %d", rec.Calls, rec.Turns)
				}
				if c.log != "" && !strings.Contains(h.logs.String(), c.log) {
					t.Errorf("the log lacks %q:\n%s", c.log, h.logs.String())
				}
				if got := h.history(rec.ID); got.Stopped != rec.Stopped || got.Retries != rec.Retries || len(got.Calls) != 1 {
					t.Errorf("history: stopped %q retries %d calls %d", got.Stopped, got.Retries, len(got.Calls))
				}
			})
		}
	}
}

// A model slow to start, within the request timeout: the silence is
// logged as it grows, then the first token, and nothing is retried.
func TestSlowFirstTokenIsLoggedNotRetried(t *testing.T) {
	h := newHarness(t, options{timeout: "5s"}, agenttest.Step{Stall: 400 * time.Millisecond, Text: "Slow, but here."})
	rec := h.run(agent.Request{Instruction: "Say something."})
	if rec.Stopped != agent.StoppedAnswered || rec.Retries != 0 || rec.Reply != "Slow, but here." {
		t.Fatalf("record: stopped %q retries %d reply %q", rec.Stopped, rec.Retries, rec.Reply)
	}
	logs := h.logs.String()
	for _, want := range []string{"turn 1/6 attempt 1 — nothing received after", "turn 1/6 attempt 1 — first token after"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %q:\n%s", want, logs)
		}
	}
}
