package agent

import (
	"encoding/json"
	"time"
)

// How a run stopped.
const (
	StoppedAnswered = "answered"  // the model answered without asking for a tool
	StoppedMaxTurns = "max_turns" // the last turn allowed was taken
	// StoppedMaxToolCalls: the model asked for a call past the run's
	// agent.max_tool_calls, which was refused.
	StoppedMaxToolCalls = "max_tool_calls"
	StoppedDeadline     = "deadline" // the run's deadline passed
	StoppedError        = "error"    // the model failed (a verdict, or retries spent)
	// Running is a run not stopped yet, as its history shows it meanwhile.
	Running = "running"
)

// Record is what a run did, the shape a flow routes on: reply is the
// summary a later step reads, messages the conversation (resumable with
// --resume), calls every tool call with the result the model saw.
type Record struct {
	ID          string `json:"id"`
	Instruction string `json:"instruction"`
	Reply       string `json:"reply"`
	Turns       int    `json:"turns"`
	Stopped     string `json:"stopped"`
	// Error says why a run stopped with error or deadline.
	Error string `json:"error,omitempty"`
	// Waiting is the approval a paused run waits for.
	Waiting    *Waiting  `json:"waiting,omitempty"`
	Host       string    `json:"host"`
	Workspace  string    `json:"workspace,omitempty"`
	Principal  string    `json:"principal"`
	Model      string    `json:"model"`
	ToolsUsed  []string  `json:"tools_used"`
	SkillsUsed []string  `json:"skills_used"`
	Usage      Usage     `json:"usage"`
	Retries    int       `json:"retries"`
	Calls      []Call    `json:"calls"`
	Messages   []Message `json:"messages"`
	// ResumedFrom is the run whose conversation this one continued.
	ResumedFrom string    `json:"resumed_from,omitempty"`
	StartedAt   time.Time `json:"started_at"`
	EndedAt     time.Time `json:"ended_at,omitzero"`
}

// Waiting is a call held for approval, which pauses the run.
type Waiting struct {
	ApprovalID string    `json:"approval_id"`
	Tool       string    `json:"tool"`
	Since      time.Time `json:"since"`
}

// Call is one tool call of a run, in order.
type Call struct {
	Turn      int             `json:"turn"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// Result is what the model was shown (cut at max_result_bytes).
	Result  string `json:"result"`
	IsError bool   `json:"is_error,omitempty"`
	// ApprovalID is the approval the call was held for, if it was.
	ApprovalID string `json:"approval_id,omitempty"`
}
