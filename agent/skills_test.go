package agent_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/agent"
	"github.com/legate-mcp/legate/agent/agenttest"
)

const triageSkill = `---
name: log-triage
description: Use when a service misbehaves and its logs must be read to find the first error and its cause.
---
# Log triage

PROCEDURE-BODY-MARKER: read the first ERROR line.
`

// An enabled skill costs one line of the system prompt; its body comes
// only through skills_load, and the record says it was followed.
func TestSkillsReachThePromptAndTheRecord(t *testing.T) {
	h := newHarness(t, options{skill: triageSkill},
		agenttest.Step{Calls: []agenttest.ToolCall{agenttest.Call("host__skills_load", `{"name":"log-triage"}`)}},
		agenttest.Step{Text: "Followed log-triage."},
	)
	rec := h.run(agent.Request{Instruction: "The API is down; find out why."})
	if rec.Stopped != agent.StoppedAnswered || !slices.Equal(rec.SkillsUsed, []string{"log-triage"}) {
		t.Fatalf("record: stopped %q skills_used %v calls %+v", rec.Stopped, rec.SkillsUsed, rec.Calls)
	}
	if !strings.Contains(rec.Calls[0].Result, "PROCEDURE-BODY-MARKER") {
		t.Errorf("skills_load's result: %q", rec.Calls[0].Result)
	}
	first := h.model.Requests()[0]["messages"].([]any)[0].(map[string]any)
	system, _ := first["content"].(string)
	if first["role"] != "system" || !strings.Contains(system, "- log-triage: Use when a service misbehaves") || strings.Contains(system, "PROCEDURE-BODY-MARKER") {
		t.Errorf("system prompt:\n%v", first)
	}
}
