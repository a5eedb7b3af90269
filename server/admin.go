package server

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/store"
)

// adminHandler serves the admin API under /admin/v1/. Every request needs
// `Authorization: Bearer <LEGATE_ADMIN_TOKEN>`; without a configured token
// the API is off.
func (g *Gateway) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /admin/v1/approvals", g.adminListApprovals)
	mux.HandleFunc("GET /admin/v1/approvals/{id}", g.adminGetApproval)
	mux.HandleFunc("POST /admin/v1/approvals/{id}/{verb}", g.adminDecide)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.auth.Enabled() {
			// The authenticator checked the token and the role already.
			r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
			mux.ServeHTTP(w, r)
			return
		}
		if g.opts.AdminToken == "" {
			writeJSONError(w, http.StatusForbidden, "the admin API is off: start legate with LEGATE_ADMIN_TOKEN set")
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(g.opts.AdminToken)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="legate-admin"`)
			writeJSONError(w, http.StatusUnauthorized, "missing or wrong admin token")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		mux.ServeHTTP(w, r)
	})
}

// ApprovalView is an approval request as the admin API and CLI show it:
// the arguments in full and the tool's definition as clients saw it.
type ApprovalView struct {
	ID         string          `json:"id"`
	State      string          `json:"state"`
	Tool       string          `json:"tool"`
	Class      string          `json:"class"`
	Principal  string          `json:"principal"`
	Tenant     string          `json:"tenant,omitempty"`
	Session    string          `json:"session,omitempty"`
	Arguments  json.RawMessage `json:"arguments"`
	ArgsHash   string          `json:"arguments_sha256"`
	Definition json.RawMessage `json:"tool_definition,omitempty"`
	DefHash    string          `json:"definition_hash"`
	CreatedAt  time.Time       `json:"created_at"`
	ExpiresAt  time.Time       `json:"expires_at"`
	DecidedAt  time.Time       `json:"decided_at,omitzero"`
	Decider    string          `json:"decider,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	Outcome    json.RawMessage `json:"outcome,omitempty"`
}

// ViewOf turns a stored request into its view.
func ViewOf(a *store.Approval) ApprovalView {
	return ApprovalView{
		ID: a.ID, State: a.State, Tool: a.Tool, Class: a.Class, Principal: a.Principal, Tenant: a.Tenant, Session: a.Session,
		Arguments: a.Args, ArgsHash: a.ArgsHash, Definition: a.Definition, DefHash: a.DefHash,
		CreatedAt: a.CreatedAt, ExpiresAt: a.ExpiresAt, DecidedAt: a.DecidedAt, Decider: a.Decider, Reason: a.Reason, Outcome: a.Outcome,
	}
}

// tenantScope is the tenant an approver is confined to: its own, unless it
// is an admin (or authentication is off), which sees every tenant ("", false).
func tenantScope(r *http.Request) (string, bool) {
	p := PrincipalFromContext(r.Context())
	if p == nil || p.HasRole(RoleAdmin) {
		return "", false
	}
	return p.Tenant, true
}

// visible reports whether the request's principal may see a.
func visible(r *http.Request, a *store.Approval) bool {
	t, scoped := tenantScope(r)
	return !scoped || a.Tenant == t
}

func (g *Gateway) adminListApprovals(w http.ResponseWriter, r *http.Request) {
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	tenant := r.URL.Query().Get("tenant")
	if t, scoped := tenantScope(r); scoped {
		tenant = t
	}
	list, err := g.inbox.Store().List(r.Context(), r.URL.Query().Get("state"), tenant, limit)
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := make([]ApprovalView, len(list))
	for i, a := range list {
		out[i] = ViewOf(a)
	}
	writeJSON(w, http.StatusOK, map[string]any{"approvals": out})
}

func (g *Gateway) adminGetApproval(w http.ResponseWriter, r *http.Request) {
	a, err := g.inbox.Store().Get(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) || err == nil && !visible(r, a) {
		writeJSONError(w, http.StatusNotFound, fmt.Sprintf("approval %q not found", r.PathValue("id")))
		return
	}
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, ViewOf(a))
}

func (g *Gateway) adminDecide(w http.ResponseWriter, r *http.Request) {
	verb := r.PathValue("verb")
	if verb != "approve" && verb != "deny" {
		writeJSONError(w, http.StatusNotFound, fmt.Sprintf("unknown action %q: approve or deny", verb))
		return
	}
	var body struct {
		Reason  string `json:"reason"`
		Decider string `json:"decider"`
	}
	if r.ContentLength != 0 {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeJSONError(w, http.StatusBadRequest, "body must be JSON: {\"reason\": \"...\"}")
			return
		}
	}
	decider := "admin"
	if body.Decider != "" {
		decider = "admin:" + body.Decider
	}
	if p := PrincipalFromContext(r.Context()); p != nil {
		decider = p.Name // an authenticated approver decides as itself
		if a, err := g.inbox.Store().Get(r.Context(), r.PathValue("id")); err == nil && !visible(r, a) {
			writeJSONError(w, http.StatusNotFound, fmt.Sprintf("approval %q not found", r.PathValue("id")))
			return
		}
	}
	a, err := g.Decide(r.Context(), r.PathValue("id"), verb == "approve", decider, body.Reason)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeJSONError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, store.ErrConflict), errors.Is(err, policy.ErrSelfApproval):
		writeJSONError(w, http.StatusConflict, err.Error())
	case err != nil:
		writeJSONError(w, http.StatusInternalServerError, err.Error())
	default:
		writeJSON(w, http.StatusOK, ViewOf(a))
	}
}

// Decide approves or denies a pending request. A waiting call wakes at
// once; with none, the executor runs an approved request within half a second.
func (g *Gateway) Decide(ctx context.Context, id string, approve bool, decider, reason string) (*store.Approval, error) {
	a, err := g.inbox.Decide(ctx, id, approve, decider, reason)
	if err == nil {
		g.metrics.decided.Observe(a.DecidedAt.Sub(a.CreatedAt).Seconds())
	}
	return a, err
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
