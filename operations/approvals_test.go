package operations_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/operations"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

// observations counts what a histogram is given.
type observations int

func (o *observations) Observe(float64) { *o++ }

// A decision is one audit row whatever its outcome, and one observation
// of its latency when it was made; a request that is not there is neither.
func TestADecisionIsAuditedAndMeasuredOnce(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	if err := st.Approvals().Create(ctx, &store.Approval{ID: "ap_1", Principal: "alice", Tenant: "acme", Tool: "web.post", Class: "write",
		Args: []byte(`{}`), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	var rows []store.AuditRow
	var measured observations
	x := &operations.Approvals{Inbox: policy.NewInbox(st.Approvals(), policy.ApprovalsConfig{}),
		Audit: func(r store.AuditRow) { rows = append(rows, r) }, Decided: &measured}

	a, err := x.Decide(ctx, admin.Decision{ID: "ap_1", Approve: true, Decider: "bob", Reason: "fine"})
	if err != nil || a.State != store.StateApproved || a.Decider != "bob" {
		t.Fatalf("approve: %+v %v", a, err)
	}
	if len(rows) != 1 || measured != 1 {
		t.Fatalf("after one decision: %d rows, %d observations", len(rows), measured)
	}
	r := rows[0]
	if r.Principal != "bob" || r.Tenant != "" || r.Tool != "admin.approvals.approve" || r.Source != "admin" || r.ApprovalID != "ap_1" ||
		r.Outcome != "ok" || r.Detail != `approve web.post of alice: decided a request of tenant "acme"` {
		t.Fatalf("row %+v", r)
	}

	// Deciding again is refused, and audited as refused, not measured.
	if _, err := x.Decide(ctx, admin.Decision{ID: "ap_1", Decider: "carol", Tenant: "acme"}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("decided twice: %v", err)
	}
	if len(rows) != 2 || measured != 1 || rows[1].Outcome != admin.CodeConflict || rows[1].Tool != "admin.approvals.deny" ||
		strings.Contains(rows[1].Detail, "tenant") {
		t.Fatalf("the refused decision: %d observations, rows %+v", measured, rows)
	}

	// No request: nothing was decided, nothing to record.
	if _, err := x.Decide(ctx, admin.Decision{ID: "ap_none", Approve: true, Decider: "bob"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown request: %v", err)
	}
	if len(rows) != 2 || measured != 1 {
		t.Fatalf("an unknown request left %d rows, %d observations", len(rows), measured)
	}
}
