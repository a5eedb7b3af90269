package store

import (
	"context"
	"time"
)

// AgentRun is one run of the agent as kept in its history: who asked,
// when, how it stopped, and its whole record (agent.Record as JSON).
type AgentRun struct {
	ID          string
	Principal   string
	Tenant      string
	Instruction string
	// Stopped is how the run ended (answered, max_turns, max_tool_calls, deadline, error),
	// or running while it runs or waits for an approval.
	Stopped   string
	StartedAt time.Time
	UpdatedAt time.Time
	// Record is the run's record, JSON.
	Record []byte
}

// AgentRunFilter selects runs of the history. Zero fields select all.
type AgentRunFilter struct {
	Principal string
	Tenant    string
	// Limit caps the runs returned (0: 50).
	Limit int
}

// AgentRunStore keeps the agent's history, one row per run, updated as
// the run goes so that a run that fails or is stopped leaves its record.
type AgentRunStore interface {
	// Put stores r, replacing the run with its id. Times go in
	// milliseconds; a zero UpdatedAt means now.
	Put(ctx context.Context, r AgentRun) error
	// Get returns the run with id, or an error wrapping ErrNotFound.
	Get(ctx context.Context, id string) (AgentRun, error)
	// List returns the runs f selects, the latest started first, without
	// their records.
	List(ctx context.Context, f AgentRunFilter) ([]AgentRun, error)
	// Prune deletes the runs that ended (Stopped is not "running") and were
	// last updated before before, reporting how many.
	Prune(ctx context.Context, before time.Time) (int64, error)
}
