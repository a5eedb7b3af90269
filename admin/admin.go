package admin

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/connections"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/store"
)

// Ops are the operations the admin API runs, implemented by the gateway.
type Ops interface {
	// ListApprovals lists approval requests.
	ListApprovals(ctx context.Context, f store.ApprovalFilter) ([]*store.Approval, error)
	// Approval returns one request; store.ErrNotFound if there is none.
	Approval(ctx context.Context, id string) (*store.Approval, error)
	// Decide approves or denies a pending request and audits the
	// decision (store.ErrNotFound, store.ErrConflict,
	// policy.ErrSelfApproval).
	Decide(ctx context.Context, d Decision) (*store.Approval, error)
	// Audit records a row in the audit log.
	Audit(row store.AuditRow)
}

// A Decision approves or denies a pending request.
type Decision struct {
	ID      string
	Approve bool
	// Decider is who decides, as the request and the audit row name it;
	// Tenant is the decider's tenant ("" without one).
	Decider, Tenant string
	Reason          string
}

// Options configure the admin API.
type Options struct {
	// Authenticated says requests reach the handler through the
	// authenticator's middleware and role check: the caller is the
	// request's principal, and Token is not asked for.
	Authenticated bool
	// Token is the admin token every request bears without
	// authentication; "" leaves the API off.
	Token string
	// Logger receives a line per access across tenants; nil discards them.
	Logger *slog.Logger
	// Connections, when set, are the per-user connections of connector
	// instances, served under /admin/v1/connections.
	Connections *connections.Manager
}

// api serves the admin API.
type api struct {
	ops  Ops
	opts Options
	log  *slog.Logger
	// reads are when each repeated read across tenants was last audited.
	readsMu sync.Mutex
	reads   map[string]time.Time
}

// repeatedReadWindow is how long the same read across tenants, by the
// same principal seeing the same thing, is not audited again: a panel
// polling the inbox each second leaves a row when what it sees changes,
// and one a minute otherwise.
const repeatedReadWindow = time.Minute

// maxBody bounds a request's body.
const maxBody = 64 << 10

// Handler serves the admin API under /admin/v1/. With authentication off,
// every request needs `Authorization: Bearer <Token>`; without a Token the
// API is off.
func Handler(ops Ops, opts *Options) http.Handler {
	if opts == nil {
		opts = &Options{}
	}
	h := &api{ops: ops, opts: *opts, log: opts.Logger}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	for _, rt := range routes {
		mux.HandleFunc(rt.pattern, rt.handler(h))
	}
	var conns http.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSONError(w, http.StatusNotFound, "this server keeps no per-user connections")
	})
	if opts.Connections != nil {
		conns = connectionsHandler(opts.Connections)
	}
	for _, p := range connectionRoutes {
		mux.Handle(p, conns)
	}
	named := jsonErrors(mux)
	// Every operation is told who calls, for its audit row.
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		named.ServeHTTP(w, r.WithContext(WithCaller(r.Context(), callerName(r), callerTenant(r))))
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.opts.Authenticated {
			// The authenticator checked the token and the role already.
			r.Body = http.MaxBytesReader(w, r.Body, maxBody)
			api.ServeHTTP(w, r)
			return
		}
		if h.opts.Token == "" {
			writeJSONError(w, http.StatusForbidden, "the admin API is off: start legate with LEGATE_ADMIN_TOKEN set")
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(h.opts.Token)) != 1 {
			w.Header().Set("WWW-Authenticate", auth.BearerChallenge(ok, `realm="legate-admin"`))
			writeJSONError(w, http.StatusUnauthorized, "missing or wrong admin token")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		api.ServeHTTP(w, r)
	})
}

// connectionRoutes are the routes Options.Connections serves.
var connectionRoutes = []string{"GET /admin/v1/connections", "DELETE /admin/v1/connections/{instance}", "POST /admin/v1/connections/{instance}/connect", "PUT /admin/v1/connections/{instance}/token"}

// routes are the API's routes, each a ServeMux pattern and its handler.
var routes = []struct {
	pattern string
	handler func(*api) http.HandlerFunc
}{
	{"GET /admin/v1/approvals", func(h *api) http.HandlerFunc { return h.listApprovals }},
	{"GET /admin/v1/approvals/{id}", func(h *api) http.HandlerFunc { return h.getApproval }},
	{"POST /admin/v1/approvals/{id}/{verb}", func(h *api) http.HandlerFunc { return h.decide }},
	{"GET /admin/v1/status", func(h *api) http.HandlerFunc { return h.status }},
	{"GET /admin/v1/me", func(*api) http.HandlerFunc { return me }},
	{"GET /admin/v1/openapi.json", func(h *api) http.HandlerFunc { return serveOpenAPI }},
	{"GET /admin/v1/connector-types", func(*api) http.HandlerFunc { return connectorTypes }},
	{"GET /admin/v1/connectors", func(h *api) http.HandlerFunc { return h.listConnectors }},
	{"POST /admin/v1/connectors", func(h *api) http.HandlerFunc { return h.addConnector }},
	{"GET /admin/v1/connectors/{id}", getConnector},
	{"DELETE /admin/v1/connectors/{id}", func(h *api) http.HandlerFunc { return h.removeConnector }},
	{"POST /admin/v1/connectors/{id}/test", func(h *api) http.HandlerFunc { return h.testConnector }},
	{"GET /admin/v1/upstreams", func(h *api) http.HandlerFunc { return h.listUpstreams }},
	{"POST /admin/v1/upstreams", func(h *api) http.HandlerFunc { return h.addUpstream }},
	{"DELETE /admin/v1/upstreams/{id}", func(h *api) http.HandlerFunc { return h.removeUpstream }},
	{"POST /admin/v1/upstreams/{id}/{verb}", func(h *api) http.HandlerFunc { return h.upstreamAction }},
	{"GET /admin/v1/upstreams/{id}/quarantine", func(h *api) http.HandlerFunc { return h.quarantine }},
	{"GET /admin/v1/quarantine", func(h *api) http.HandlerFunc { return h.quarantine }},
	{"GET /admin/v1/tools", func(h *api) http.HandlerFunc { return h.tools }},
	{"GET /admin/v1/sessions", func(h *api) http.HandlerFunc { return h.sessions }},
	{"DELETE /admin/v1/sessions/{id}", func(h *api) http.HandlerFunc { return h.closeSession }},
	{"GET /admin/v1/budgets", budgets},
	{"GET /admin/v1/audit", func(h *api) http.HandlerFunc { return h.audit }},
	{"GET /admin/v1/agent/runs", func(h *api) http.HandlerFunc { return h.agentRuns }},
	{"GET /admin/v1/agent/runs/{id}", func(h *api) http.HandlerFunc { return h.agentRun }},
	{"GET /admin/v1/skills", func(h *api) http.HandlerFunc { return skillsAPI{h}.listSkills }},
	{"POST /admin/v1/skills", func(h *api) http.HandlerFunc { return skillsAPI{h}.installSkill }},
	{"POST /admin/v1/skills/{name}/{verb}", func(h *api) http.HandlerFunc { return skillsAPI{h}.skillAction }},
	{"GET /admin/v1/audit/export", func(h *api) http.HandlerFunc { return h.auditExport }},
	{"GET /admin/v1/tokens", func(h *api) http.HandlerFunc { return h.listTokens }},
	{"POST /admin/v1/tokens", func(h *api) http.HandlerFunc { return h.createToken }},
	{"DELETE /admin/v1/tokens/{name}", func(h *api) http.HandlerFunc { return h.revokeToken }},
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
	// Hold says why the request waits (shown one at a time, not in lists).
	Hold *Hold `json:"hold,omitempty"`
}

// ViewOf turns a stored request into its view.
func ViewOf(a *store.Approval) ApprovalView {
	return ApprovalView{
		ID: a.ID, State: a.State, Tool: a.Tool, Class: a.Class, Principal: a.Principal, Tenant: a.Tenant, Session: a.Session,
		Arguments: a.Args, ArgsHash: a.ArgsHash, Definition: a.Definition, DefHash: a.DefHash,
		CreatedAt: a.CreatedAt, ExpiresAt: a.ExpiresAt, DecidedAt: a.DecidedAt, Decider: a.Decider, Reason: a.Reason, Outcome: a.Outcome,
	}
}

// tenantScope is the tenant the caller of r is confined to, and whether it
// is confined: a principal below the admin role sees its own tenant only,
// "" being the shared tenant of principals without one (never "every
// tenant"); an admin, or the admin token with authentication off, sees
// every tenant, and its reads beyond its own are audited (auditAdmin).
func tenantScope(r *http.Request) (string, bool) {
	p := auth.PrincipalFromContext(r.Context())
	if p == nil || p.HasRole(auth.RoleAdmin) {
		return "", false
	}
	return p.Tenant, true
}

// MaxApprovalList is the most requests one admin API listing returns,
// whatever its limit asks for (default 100).
const MaxApprovalList = 1000

// maxApprovalScan bounds the requests a listing reads to filter and page:
// pages reach the newest maxApprovalScan requests the caller may see.
const maxApprovalScan = 10_000

// approvalPage is a listing's filters beyond the store's and its page.
type approvalPage struct {
	tool, principal string
	offset, limit   int
}

// approvalFilter is what the caller of r asks to list and may see: a
// confined caller its own tenant (naming another is forbidden); an admin
// the tenant ?tenant= names ("" the shared one), or every tenant without it.
func approvalFilter(r *http.Request) (store.ApprovalFilter, approvalPage, error) {
	q := r.URL.Query()
	pg := approvalPage{tool: q.Get("tool"), principal: q.Get("principal"), limit: 100}
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 {
			return store.ApprovalFilter{}, pg, &Error{Status: http.StatusBadRequest, Message: fmt.Sprintf("limit %q: want a whole number from 1 (at most %d are listed)", q.Get("limit"), MaxApprovalList)}
		}
		pg.limit = min(n, MaxApprovalList)
	}
	if c := q.Get("cursor"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 0 {
			return store.ApprovalFilter{}, pg, &Error{Status: http.StatusBadRequest, Message: fmt.Sprintf("cursor %q: want the next_cursor of a previous page", c)}
		}
		pg.offset = n
	}
	f := store.ApprovalFilter{State: q.Get("state"), Tenant: q.Get("tenant"), AllTenants: !q.Has("tenant"), Limit: maxApprovalScan}
	own, scoped := tenantScope(r)
	if !scoped {
		return f, pg, nil
	}
	if q.Has("tenant") && f.Tenant != own {
		return f, pg, &Error{Status: http.StatusForbidden, Message: fmt.Sprintf("forbidden: tenant %q is not the caller's: seeing other tenants needs the %s role", f.Tenant, auth.RoleAdmin)}
	}
	f.Tenant, f.AllTenants = own, false
	return f, pg, nil
}

func (h *api) listApprovals(w http.ResponseWriter, r *http.Request) {
	if err := store.CheckState(r.URL.Query().Get("state")); err != nil {
		writeJSONError(w, http.StatusBadRequest, err.Error())
		return
	}
	f, pg, err := approvalFilter(r)
	if e := (*Error)(nil); errors.As(err, &e) {
		writeJSONError(w, e.Status, e.Message)
		return
	}
	list, err := h.ops.ListApprovals(r.Context(), f)
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	var out []ApprovalView
	skipped, more := 0, false
	for _, a := range list {
		if pg.tool != "" && a.Tool != pg.tool || pg.principal != "" && a.Principal != pg.principal {
			continue
		}
		if skipped < pg.offset {
			skipped++
			continue
		}
		if len(out) == pg.limit {
			more = true
			break
		}
		out = append(out, ViewOf(a))
	}
	if out == nil {
		out = []ApprovalView{}
	}
	if f.AllTenants {
		h.auditAdmin(r, "admin.approvals.list", "read", "", fmt.Sprintf("listed %d requests of every tenant", len(out)))
	} else if own := callerTenant(r); f.Tenant != own {
		h.auditAdmin(r, "admin.approvals.list", "read", "", fmt.Sprintf("listed %d requests of tenant %q", len(out), f.Tenant))
	}
	body := map[string]any{"approvals": out}
	if more {
		body["next_cursor"] = strconv.Itoa(pg.offset + len(out))
	}
	writeJSON(w, http.StatusOK, body)
}

// approval returns the request r names if its caller may see it; otherwise
// it answers 404 (another tenant's request is not there for the caller)
// or 500, and returns nil.
func (h *api) approval(w http.ResponseWriter, r *http.Request) *store.Approval {
	a, err := h.ops.Approval(r.Context(), r.PathValue("id"))
	t, scoped := tenantScope(r)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && scoped && a.Tenant != t:
		writeJSONError(w, http.StatusNotFound, fmt.Sprintf("approval %q not found", r.PathValue("id")))
		return nil
	case err != nil:
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return nil
	}
	return a
}

func (h *api) getApproval(w http.ResponseWriter, r *http.Request) {
	a := h.approval(w, r)
	if a == nil {
		return
	}
	if a.Tenant != callerTenant(r) {
		h.auditAdmin(r, "admin.approvals.get", "read", a.ID, fmt.Sprintf("read a request of tenant %q", a.Tenant))
	}
	v := ViewOf(a)
	if m, ok := h.ops.(ManageOps); ok {
		hold := m.Held(r.Context(), a)
		v.Hold = &hold
	}
	writeJSON(w, http.StatusOK, v)
}

func (h *api) decide(w http.ResponseWriter, r *http.Request) {
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
			bodyError(w, err, `{"reason": "...", "decider": "..."}`)
			return
		}
	}
	decider := "admin"
	if body.Decider != "" {
		decider = "admin:" + body.Decider
	}
	if p := auth.PrincipalFromContext(r.Context()); p != nil {
		decider = p.Name // an authenticated approver decides as itself
	}
	target := h.approval(w, r)
	if target == nil {
		return
	}
	// The decision is audited by the operation, whoever calls it.
	a, err := h.ops.Decide(r.Context(), Decision{ID: target.ID, Approve: verb == "approve", Decider: decider, Tenant: callerTenant(r), Reason: body.Reason})
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

// callerTenant is the tenant of r's principal, "" without one.
func callerTenant(r *http.Request) string {
	if p := auth.PrincipalFromContext(r.Context()); p != nil {
		return p.Tenant
	}
	return ""
}

// auditAdmin records, in the audit log and the log, an admin's use of the
// admin API beyond its own tenant: the only way to see every tenant is
// explicit and leaves a trace. A read repeated within repeatedReadWindow,
// seeing the same thing, leaves no second row.
func (h *api) auditAdmin(r *http.Request, action, class, approvalID, detail string) {
	name, tenant := "admin", ""
	if p := auth.PrincipalFromContext(r.Context()); p != nil {
		name, tenant = p.Name, p.Tenant
	}
	if class == "read" {
		key := name + "\x00" + tenant + "\x00" + action + "\x00" + approvalID + "\x00" + detail
		now := time.Now()
		h.readsMu.Lock()
		last, seen := h.reads[key]
		repeated := seen && now.Sub(last) < repeatedReadWindow
		if !repeated {
			if h.reads == nil || len(h.reads) > 10_000 {
				h.reads = map[string]time.Time{} // bounded: forgetting only audits again
			}
			h.reads[key] = now
		}
		h.readsMu.Unlock()
		if repeated {
			return
		}
	}
	h.log.Info("admin access across tenants", "principal", name, "action", action, "approval", approvalID, "detail", detail)
	h.ops.Audit(store.AuditRow{Time: time.Now(), Principal: name, Tenant: tenant, Tool: action, Source: "admin",
		Class: class, Decision: "allow", ApprovalID: approvalID, Outcome: "ok", Detail: detail})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
