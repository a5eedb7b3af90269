package operations

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/store"
)

// Approvals decides approval requests. Every decision, whoever makes it
// (the admin API, the panel, the CLI with or without a running server, a
// user answering in the client), is one audit row and one observation of
// the time from the request to its decision.
type Approvals struct {
	Inbox *policy.Inbox
	// Audit records the decision's row.
	Audit func(store.AuditRow)
	// Decided, when set, observes the time from a request to its
	// decision; a process without metrics leaves it nil.
	Decided prometheus.Observer
}

// Decide approves or denies the pending request d names. A request that
// cannot be read is not decided, and leaves no row; otherwise the row
// says who decided what (the tool and principal of the request, its
// tenant when it is not the decider's) and how it ended. Errors wrap
// store.ErrNotFound, store.ErrConflict or policy.ErrSelfApproval.
func (x *Approvals) Decide(ctx context.Context, d admin.Decision) (*store.Approval, error) {
	target, err := x.Inbox.Store().Get(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	a, err := x.Inbox.Decide(ctx, d.ID, d.Approve, d.Decider, d.Reason)
	verb := "deny"
	if d.Approve {
		verb = "approve"
	}
	detail := fmt.Sprintf("%s %s of %s", verb, target.Tool, target.Principal)
	if target.Tenant != d.Tenant {
		detail += fmt.Sprintf(": decided a request of tenant %q", target.Tenant)
	}
	row := store.AuditRow{Time: time.Now(), Principal: d.Decider, Tenant: d.Tenant, Tool: "admin.approvals." + verb, Source: "admin",
		Class: "write", Decision: "allow", ApprovalID: target.ID, Outcome: "ok", Detail: detail}
	switch {
	case errors.Is(err, store.ErrNotFound):
		row.Outcome = admin.CodeNotFound
	case errors.Is(err, store.ErrConflict), errors.Is(err, policy.ErrSelfApproval):
		row.Outcome = admin.CodeConflict
	case err != nil:
		row.Outcome = admin.CodeInternal
	case x.Decided != nil:
		x.Decided.Observe(a.DecidedAt.Sub(a.CreatedAt).Seconds())
	}
	x.Audit(row)
	return a, err
}
