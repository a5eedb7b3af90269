package server

import (
	"context"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/store"
)

// adminOps are the gateway's operations the admin API runs.
type adminOps struct{ g *Gateway }

func (o adminOps) ListApprovals(ctx context.Context, f store.ApprovalFilter) ([]*store.Approval, error) {
	return o.g.inbox.Store().List(ctx, f)
}

func (o adminOps) Approval(ctx context.Context, id string) (*store.Approval, error) {
	return o.g.inbox.Store().Get(ctx, id)
}

func (o adminOps) Decide(ctx context.Context, id string, approve bool, decider, reason string) (*store.Approval, error) {
	return o.g.Decide(ctx, id, approve, decider, reason)
}

func (o adminOps) Audit(row store.AuditRow) { o.g.audit.Add(row) }

var _ admin.Ops = adminOps{}
