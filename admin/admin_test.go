package admin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/store"
)

// inbox is an Ops over a map of requests.
type inbox struct {
	m       map[string]*store.Approval
	audited []store.AuditRow
}

func (i *inbox) ListApprovals(_ context.Context, f store.ApprovalFilter) ([]*store.Approval, error) {
	var out []*store.Approval
	for _, a := range i.m {
		if f.AllTenants || a.Tenant == f.Tenant {
			out = append(out, a)
		}
	}
	return out, nil
}

func (i *inbox) Approval(_ context.Context, id string) (*store.Approval, error) {
	if a, ok := i.m[id]; ok {
		return a, nil
	}
	return nil, store.ErrNotFound
}

func (i *inbox) Decide(_ context.Context, d admin.Decision) (*store.Approval, error) {
	id, approve, decider, reason := d.ID, d.Approve, d.Decider, d.Reason
	a, ok := i.m[id]
	switch {
	case !ok:
		return nil, store.ErrNotFound
	case a.Principal == decider:
		return nil, policy.ErrSelfApproval
	case a.State != store.StatePending:
		return nil, fmt.Errorf("approval %s is %s: %w", id, a.State, store.ErrConflict)
	}
	a.State, a.Decider, a.Reason = store.StateDenied, decider, reason
	if approve {
		a.State = store.StateApproved
	}
	return a, nil
}

func (i *inbox) Audit(row store.AuditRow) { i.audited = append(i.audited, row) }

var _ admin.Ops = (*inbox)(nil)

func newInbox() *inbox {
	return &inbox{m: map[string]*store.Approval{
		"a1": {ID: "a1", State: store.StatePending, Tool: "web.post", Principal: "alice", Args: json.RawMessage(`{}`)},
		"a2": {ID: "a2", State: store.StateExecuted, Tool: "web.post", Principal: "alice", Tenant: "acme", Args: json.RawMessage(`{}`)},
	}}
}

func do(h http.Handler, method, path, token, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestTheAPIIsOffWithoutAToken(t *testing.T) {
	w := do(admin.Handler(newInbox(), nil), "GET", "/admin/v1/approvals", "anything", "")
	if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "LEGATE_ADMIN_TOKEN") {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
}

func TestTheAdminToken(t *testing.T) {
	h := admin.Handler(newInbox(), &admin.Options{Token: "right"})
	for name, tc := range map[string]struct {
		token, challenge string
		status           int
	}{
		"none":  {"", `Bearer realm="legate-admin"`, http.StatusUnauthorized},
		"wrong": {"wrong", `Bearer realm="legate-admin", error="invalid_token"`, http.StatusUnauthorized},
		"right": {"right", "", http.StatusOK},
	} {
		w := do(h, "GET", "/admin/v1/approvals", tc.token, "")
		if w.Code != tc.status || w.Header().Get("WWW-Authenticate") != tc.challenge {
			t.Errorf("%s: status %d, challenge %q", name, w.Code, w.Header().Get("WWW-Authenticate"))
		}
	}
}

func TestDecisions(t *testing.T) {
	in := newInbox()
	h := admin.Handler(in, &admin.Options{Token: "right"})
	for name, tc := range map[string]struct {
		path, body string
		status     int
	}{
		"unknown verb":    {"/admin/v1/approvals/a1/maybe", "", http.StatusNotFound},
		"unknown request": {"/admin/v1/approvals/zz/approve", "", http.StatusNotFound},
		"not JSON":        {"/admin/v1/approvals/a1/approve", "yes", http.StatusBadRequest},
		"approve":         {"/admin/v1/approvals/a1/approve", `{"decider": "x"}`, http.StatusOK},
		"decided already": {"/admin/v1/approvals/a2/deny", "", http.StatusConflict},
	} {
		if w := do(h, "POST", tc.path, "right", tc.body); w.Code != tc.status {
			t.Errorf("%s: status %d: %s", name, w.Code, w.Body)
		}
	}
	if a := in.m["a1"]; a.State != store.StateApproved || a.Decider != "admin:x" {
		t.Fatalf("a1 %s by %q", a.State, a.Decider)
	}
	var v admin.ApprovalView
	w := do(h, "GET", "/admin/v1/approvals/a1", "right", "")
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil || v.ID != "a1" || v.State != store.StateApproved {
		t.Fatalf("view %+v (%v): %s", v, err, w.Body)
	}
}

// A state that does not exist is a 400 naming the states, not an empty list.
func TestUnknownStateIsRefused(t *testing.T) {
	h := admin.Handler(newInbox(), &admin.Options{Token: "right"})
	w := do(h, "GET", "/admin/v1/approvals?state=bogus", "right", "")
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `unknown approval state \"bogus\"`) || !strings.Contains(w.Body.String(), "pending") {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if w := do(h, "GET", "/admin/v1/approvals?state=executed", "right", ""); w.Code != http.StatusOK {
		t.Fatalf("a real state: status %d: %s", w.Code, w.Body)
	}
}
