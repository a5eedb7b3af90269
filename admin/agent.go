package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/legate-mcp/legate/store"
)

// AgentOps are the operations behind /admin/v1/agent/runs, the agent's
// history. An Ops without them answers 404 there.
type AgentOps interface {
	// AgentRuns lists runs, the latest first, without their records.
	AgentRuns(ctx context.Context, f store.AgentRunFilter) ([]store.AgentRun, error)
	// AgentRun returns one run with its record (store.ErrNotFound).
	AgentRun(ctx context.Context, id string) (store.AgentRun, error)
}

// AgentRun is a run of the agent as the API shows it; Record is the run's
// whole record (agent.Record), only on GET /admin/v1/agent/runs/{id}.
type AgentRun struct {
	ID          string          `json:"id"`
	Principal   string          `json:"principal"`
	Tenant      string          `json:"tenant,omitempty"`
	Instruction string          `json:"instruction"`
	Stopped     string          `json:"stopped"`
	StartedAt   time.Time       `json:"started_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
	Record      json.RawMessage `json:"record,omitempty"`
}

func agentRunOf(r store.AgentRun) AgentRun {
	return AgentRun{ID: r.ID, Principal: r.Principal, Tenant: r.Tenant, Instruction: r.Instruction, Stopped: r.Stopped,
		StartedAt: r.StartedAt, UpdatedAt: r.UpdatedAt, Record: r.Record}
}

// agentOps is the AgentOps of the API for a caller with the admin role.
func (h *api) agentOps(w http.ResponseWriter, r *http.Request) AgentOps {
	if h.manage(w, r) == nil {
		return nil
	}
	a, ok := h.ops.(AgentOps)
	if !ok {
		writeJSONError(w, http.StatusNotFound, "this server has no "+r.URL.Path)
	}
	return a
}

func (h *api) agentRuns(w http.ResponseWriter, r *http.Request) {
	a := h.agentOps(w, r)
	if a == nil {
		return
	}
	f := store.AgentRunFilter{Principal: r.URL.Query().Get("principal")}
	if n, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil {
		f.Limit = min(max(n, 1), 1000)
	}
	runs, err := a.AgentRuns(r.Context(), f)
	if err != nil {
		fail(w, err)
		return
	}
	out := make([]AgentRun, len(runs))
	for i, run := range runs {
		out[i] = agentRunOf(run)
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": out})
}

func (h *api) agentRun(w http.ResponseWriter, r *http.Request) {
	a := h.agentOps(w, r)
	if a == nil {
		return
	}
	run, err := a.AgentRun(r.Context(), r.PathValue("id"))
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, agentRunOf(run))
}
