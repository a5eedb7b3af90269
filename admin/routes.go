package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/store"
)

// manage returns the ManageOps behind a management route, answering 404
// when the server has none and 403 when, with authentication on, the
// caller is not an admin: connectors, upstreams, tokens and the audit log
// span every tenant.
func (h *api) manage(w http.ResponseWriter, r *http.Request) ManageOps {
	m, ok := h.ops.(ManageOps)
	if !ok {
		writeJSONError(w, http.StatusNotFound, "this server has no "+r.URL.Path)
		return nil
	}
	if p := auth.PrincipalFromContext(r.Context()); h.opts.Authenticated && !p.HasRole(auth.RoleAdmin) {
		writeJSONError(w, http.StatusForbidden, "forbidden: "+r.Method+" "+r.URL.Path+" needs the "+auth.RoleAdmin+" role")
		return nil
	}
	return m
}

// callerName is who calls: the principal, or "admin" for the admin token.
func callerName(r *http.Request) string {
	if p := auth.PrincipalFromContext(r.Context()); p != nil {
		return p.Name
	}
	return "admin"
}

// audited records a use of the admin API in the audit log that is no
// operation's (those audit themselves): who did what, and whether it
// worked.
func (h *api) audited(r *http.Request, action, target string, err error) {
	row := store.AuditRow{Time: time.Now(), Principal: callerName(r), Tenant: callerTenant(r), Tool: "admin." + action,
		Source: "admin", Class: "write", Decision: "allow", Outcome: "ok", Detail: target}
	if err != nil {
		row.Outcome = ErrorCode(err)
	}
	h.ops.Audit(row)
}

// ErrorCode is the code of an error of ManageOps, as the API answers it.
func ErrorCode(err error) string { return codeOf(statusOf(err)) }

type callerKey struct{}

type caller struct{ name, tenant string }

// WithCaller returns ctx naming who calls an operation, and their tenant,
// as the operation's audit row records them.
func WithCaller(ctx context.Context, name, tenant string) context.Context {
	return context.WithValue(ctx, callerKey{}, caller{name, tenant})
}

// CallerOf is who ctx names (WithCaller); ok is false when it names none.
func CallerOf(ctx context.Context) (name, tenant string, ok bool) {
	c, ok := ctx.Value(callerKey{}).(caller)
	return c.name, c.tenant, ok
}

// statusOf is the HTTP status of an error of ManageOps.
func statusOf(err error) int {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e.Status
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, store.ErrExists), errors.Is(err, store.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, ErrInvalid):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// fail answers err with its status.
func fail(w http.ResponseWriter, err error) {
	var e *Error
	if errors.As(err, &e) {
		writeJSONError(w, e.Status, e.Message)
		return
	}
	writeJSONError(w, statusOf(err), err.Error())
}

// decode reads a JSON body into v, answering 400 or 413 when it cannot.
func decode(w http.ResponseWriter, r *http.Request, v any, want string) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		bodyError(w, err, want)
		return false
	}
	return true
}

// ConnectorType is a registered connector type as GET
// /admin/v1/connector-types lists it: its config fields (the spec the
// install form is made from) and its credentials.
type ConnectorType struct {
	Name        string                  `json:"name"`
	Description string                  `json:"description"`
	Fields      []connectors.Field      `json:"fields"`
	Credentials []connectors.Credential `json:"credentials"`
}

// ConnectorTypes lists the registered types with their specs.
func ConnectorTypes() []ConnectorType {
	var out []ConnectorType
	for _, t := range connectors.Types() {
		ct := ConnectorType{Name: t.Name, Description: t.Description, Fields: []connectors.Field{}, Credentials: t.Credentials}
		if t.Config != nil {
			if f, err := connectors.FieldsOf(t.Config()); err == nil {
				ct.Fields = f
			}
		}
		if ct.Credentials == nil {
			ct.Credentials = []connectors.Credential{}
		}
		out = append(out, ct)
	}
	return out
}

func me(w http.ResponseWriter, r *http.Request) {
	p := auth.PrincipalFromContext(r.Context())
	if p == nil {
		p = &auth.Principal{Name: "admin", Role: auth.RoleAdmin}
	}
	writeJSON(w, http.StatusOK, p)
}

func connectorTypes(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"types": ConnectorTypes()})
}

func (h *api) listConnectors(w http.ResponseWriter, r *http.Request) {
	if m := h.manage(w, r); m != nil {
		list, err := m.Connectors(r.Context())
		answer(w, map[string]any{"connectors": list}, err)
	}
}

func (h *api) addConnector(w http.ResponseWriter, r *http.Request) {
	m := h.manage(w, r)
	var in NewConnector
	if m == nil || !decode(w, r, &in, `{"id", "type", "tenant", "config": {...}, "credentials": {"NAME": {"env": "VAR"}}, "secrets": {"NAME": "value"}}`) {
		return
	}
	c, err := m.AddConnector(r.Context(), in)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, c)
}

// getConnector answers GET /admin/v1/connectors/{id}: one instance's
// record.
func getConnector(h *api) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if m := h.manage(w, r); m != nil {
			c, err := m.Connector(r.Context(), r.PathValue("id"))
			answer(w, c, err)
		}
	}
}

func (h *api) removeConnector(w http.ResponseWriter, r *http.Request) {
	if m := h.manage(w, r); m != nil {
		err := m.RemoveConnector(r.Context(), r.PathValue("id"))
		answer(w, map[string]string{"removed": r.PathValue("id")}, err)
	}
}

func (h *api) testConnector(w http.ResponseWriter, r *http.Request) {
	if m := h.manage(w, r); m != nil {
		res, err := m.TestConnector(r.Context(), r.PathValue("id"))
		answer(w, res, err)
	}
}

func (h *api) listUpstreams(w http.ResponseWriter, r *http.Request) {
	if m := h.manage(w, r); m != nil {
		list, err := m.Upstreams(r.Context())
		answer(w, map[string]any{"upstreams": list}, err)
	}
}

func (h *api) addUpstream(w http.ResponseWriter, r *http.Request) {
	m := h.manage(w, r)
	var def json.RawMessage
	if m == nil || !decode(w, r, &def, `an entry of upstreams: as JSON, {"id": "...", "url": "..."} or {"id": "...", "command": [...]}`) {
		return
	}
	// ?connect=true connects and caches the tools before answering, as
	// `legate upstream add` does; else the running server connects within
	// a second of the store taking the upstream.
	connect := r.URL.Query().Get("connect") == "true"
	res, err := m.AddUpstream(r.Context(), def, connect)
	if err != nil {
		fail(w, err)
		return
	}
	out := map[string]any{"added": res.ID}
	if connect {
		out["tools"] = res.Tools
	}
	writeJSON(w, http.StatusCreated, out)
}

func (h *api) removeUpstream(w http.ResponseWriter, r *http.Request) {
	if m := h.manage(w, r); m != nil {
		err := m.RemoveUpstream(r.Context(), r.PathValue("id"))
		answer(w, map[string]string{"removed": r.PathValue("id")}, err)
	}
}

func (h *api) refreshUpstream(w http.ResponseWriter, r *http.Request) {
	if m := h.manage(w, r); m != nil {
		res, err := m.RefreshUpstream(r.Context(), r.PathValue("id"))
		answer(w, res, err)
	}
}

func (h *api) quarantine(w http.ResponseWriter, r *http.Request) {
	if m := h.manage(w, r); m != nil {
		list, err := m.Quarantine(r.Context(), r.PathValue("id"))
		answer(w, map[string]any{"quarantined": list}, err)
	}
}

func (h *api) accept(w http.ResponseWriter, r *http.Request) {
	m := h.manage(w, r)
	var body struct {
		Tools []string `json:"tools"`
	}
	if m == nil || r.ContentLength != 0 && !decode(w, r, &body, `{"tools": ["name", ...]} (none: every tool)`) {
		return
	}
	id := r.PathValue("id")
	got, err := m.Accept(r.Context(), id, callerName(r), body.Tools)
	answer(w, map[string]any{"accepted": got}, err)
}

func (h *api) tools(w http.ResponseWriter, r *http.Request) {
	m := h.manage(w, r)
	if m == nil {
		return
	}
	q := r.URL.Query()
	var as *auth.Principal
	if q.Has("principal") || q.Has("tenant") || q.Has("profile") {
		as = &auth.Principal{Name: q.Get("principal"), Tenant: q.Get("tenant"), Profile: q.Get("profile"), Role: auth.RoleUser}
	}
	list, err := m.Tools(r.Context(), as)
	answer(w, map[string]any{"tools": list}, err)
}

func (h *api) sessions(w http.ResponseWriter, r *http.Request) {
	if m := h.manage(w, r); m != nil {
		list, err := m.Sessions(r.Context())
		answer(w, map[string]any{"sessions": list}, err)
	}
}

// budgets answers GET /admin/v1/budgets.
func budgets(h *api) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if m := h.manage(w, r); m != nil {
			list, err := m.Budgets(r.Context())
			answer(w, map[string]any{"budgets": list}, err)
		}
	}
}

func (h *api) closeSession(w http.ResponseWriter, r *http.Request) {
	if m := h.manage(w, r); m != nil {
		err := m.CloseSession(r.Context(), r.PathValue("id"))
		answer(w, map[string]string{"closed": r.PathValue("id")}, err)
	}
}

func (h *api) listTokens(w http.ResponseWriter, r *http.Request) {
	if m := h.manage(w, r); m != nil {
		list, err := m.Tokens(r.Context())
		out := make([]map[string]any, len(list))
		for i, t := range list {
			out[i] = map[string]any{"name": t.Name, "tenant": t.Tenant, "role": t.Role, "profile": t.Profile,
				"created_at": t.CreatedAt, "revoked": !t.RevokedAt.IsZero()}
			if !t.RevokedAt.IsZero() {
				out[i]["revoked_at"] = t.RevokedAt
			}
		}
		answer(w, map[string]any{"tokens": out}, err)
	}
}

func (h *api) createToken(w http.ResponseWriter, r *http.Request) {
	m := h.manage(w, r)
	var p auth.Principal
	if m == nil || !decode(w, r, &p, `{"name": "...", "role": "user|approver|admin", "tenant": "...", "profile": "..."}`) {
		return
	}
	tok, err := m.CreateToken(r.Context(), p)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"name": p.Name, "token": tok})
}

func (h *api) revokeToken(w http.ResponseWriter, r *http.Request) {
	if m := h.manage(w, r); m != nil {
		err := m.RevokeToken(r.Context(), r.PathValue("name"))
		answer(w, map[string]string{"revoked": r.PathValue("name")}, err)
	}
}

// answer writes v, or err's error.
func answer(w http.ResponseWriter, v any, err error) {
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// MaxAuditPage is the most audit rows one page holds (default 100).
const MaxAuditPage = 1000

// auditQuery reads the filters and page of an audit query.
func auditQuery(r *http.Request) (store.AuditQuery, error) {
	q := r.URL.Query()
	aq := store.AuditQuery{Tool: q.Get("tool"), Principal: q.Get("principal"), Limit: 100}
	bad := func(k, want string) error {
		return &Error{Status: http.StatusBadRequest, Message: fmt.Sprintf("%s %q: want %s", k, q.Get(k), want)}
	}
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 {
			return aq, bad("limit", fmt.Sprintf("a whole number from 1 (at most %d)", MaxAuditPage))
		}
		aq.Limit = min(n, MaxAuditPage)
	}
	if c := q.Get("cursor"); c != "" {
		n, err := strconv.ParseInt(c, 10, 64)
		if err != nil || n < 0 {
			return aq, bad("cursor", "the next_cursor of a previous page")
		}
		aq.AfterID = n
	}
	if s := q.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return aq, bad("since", "an RFC 3339 time such as 2026-01-02T15:04:05Z")
		}
		aq.Since = t
	}
	return aq, nil
}

func (h *api) audit(w http.ResponseWriter, r *http.Request) {
	m := h.manage(w, r)
	if m == nil {
		return
	}
	q, err := auditQuery(r)
	if err != nil {
		fail(w, err)
		return
	}
	rows, err := m.QueryAudit(r.Context(), q)
	if err != nil {
		fail(w, err)
		return
	}
	// Without a cursor the page is the newest rows; next_cursor then
	// follows the log from the last row shown, as tail -f does.
	next := q.AfterID
	if len(rows) > 0 {
		next = rows[len(rows)-1].ID
	}
	out := map[string]any{"rows": rows, "next_cursor": strconv.FormatInt(next, 10)}
	writeJSON(w, http.StatusOK, out)
}

// auditExport streams the rows the filters select, oldest first, as JSON
// lines, a page at a time.
func (h *api) auditExport(w http.ResponseWriter, r *http.Request) {
	m := h.manage(w, r)
	if m == nil {
		return
	}
	q, err := auditQuery(r)
	if err != nil {
		fail(w, err)
		return
	}
	// A first query without a cursor and without a limit reads from the
	// oldest row (with a limit it would read the newest).
	q.Limit = 0
	w.Header().Set("Content-Type", "application/jsonl")
	w.Header().Set("Content-Disposition", `attachment; filename="legate-audit.jsonl"`)
	enc := json.NewEncoder(w)
	for n := 0; ; {
		rows, err := m.QueryAudit(r.Context(), q)
		if err != nil {
			if n == 0 {
				fail(w, err)
			}
			return // a broken stream: the client sees it cut short
		}
		for _, row := range rows {
			enc.Encode(row)
			n++
		}
		if len(rows) < MaxAuditPage {
			h.audited(r, "audit.export", fmt.Sprintf("%d rows", n), nil)
			return
		}
		q.AfterID, q.Limit = rows[len(rows)-1].ID, MaxAuditPage
	}
}

// upstreamAction runs POST /admin/v1/upstreams/{id}/{verb}: test and
// refresh list the upstream's tools again, accept releases quarantined ones.
func (h *api) upstreamAction(w http.ResponseWriter, r *http.Request) {
	switch r.PathValue("verb") {
	case "test", "refresh":
		h.refreshUpstream(w, r)
	case "accept":
		h.accept(w, r)
	default:
		writeJSONError(w, http.StatusNotFound, fmt.Sprintf("unknown action %q: test, refresh or accept", r.PathValue("verb")))
	}
}
