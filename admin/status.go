package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/legate-mcp/legate/auth"
)

// Status is what a running server reports of itself at GET
// /admin/v1/status: the live state the store cannot tell (circuits,
// sessions), read by `legate status`.
type Status struct {
	Version          string           `json:"version"`
	StartedAt        time.Time        `json:"started_at"`
	UptimeSeconds    float64          `json:"uptime_seconds"`
	Listen           string           `json:"listen"`
	Ready            bool             `json:"ready"`
	Sessions         int              `json:"sessions"`
	PendingApprovals int              `json:"pending_approvals"`
	Upstreams        []UpstreamStatus `json:"upstreams"`
	Connectors       []ConnectorState `json:"connectors"`
	Profiles         []ProfileURL     `json:"profiles"`
}

// ProfileURL is a profile and the URL whose clients see its view, narrowed
// to their own (one URL per toolset).
type ProfileURL struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// For are the profiles whose callers may use it besides its own.
	For []string `json:"for,omitempty"`
}

// UpstreamStatus is one upstream's live state.
type UpstreamStatus struct {
	ID        string `json:"id"`
	Transport string `json:"transport"`
	Origin    string `json:"origin"`
	// Circuit is closed, open or half-open, as the server holds it now.
	Circuit     string    `json:"circuit"`
	Sessions    int       `json:"sessions"`
	Tools       int       `json:"tools"`
	Quarantined []string  `json:"quarantined,omitempty"`
	RefreshedAt time.Time `json:"refreshed_at,omitzero"`
	CheckedAt   time.Time `json:"checked_at,omitzero"`
	LastError   string    `json:"last_error,omitempty"`
}

// ConnectorState is one native connector instance as the server built it.
type ConnectorState struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Tenant string `json:"tenant,omitempty"`
	Origin string `json:"origin"`
	Tools  int    `json:"tools"`
	// Status and Circuit are those of its record (ConnectorRecord).
	Status  string `json:"status"`
	Circuit string `json:"circuit"`
}

// StatusOps is the optional operation behind GET /admin/v1/status; an Ops
// without it answers 404 there.
type StatusOps interface {
	// Status reports the server's live state.
	Status(ctx context.Context) (*Status, error)
}

// status answers GET /admin/v1/status. It names every tenant's upstreams
// and connectors, so with authentication on it needs the admin role, as
// /metrics does.
func (h *api) status(w http.ResponseWriter, r *http.Request) {
	so, ok := h.ops.(StatusOps)
	if !ok {
		writeJSONError(w, http.StatusNotFound, "this server reports no status")
		return
	}
	if p := auth.PrincipalFromContext(r.Context()); h.opts.Authenticated && (p == nil || !p.HasRole(auth.RoleAdmin)) {
		writeJSONError(w, http.StatusForbidden, "forbidden: the server's status needs the "+auth.RoleAdmin+" role")
		return
	}
	s, err := so.Status(r.Context())
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, s)
}
