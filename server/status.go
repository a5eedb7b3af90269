package server

import (
	"context"
	"time"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/store"
)

// statusOps are the admin operations with what only the HTTP server
// knows: the address it serves and since when.
type statusOps struct {
	adminOps
	listen  string
	started time.Time
}

// maxPendingCount bounds the pending requests Status counts.
const maxPendingCount = 100_000

// Status reports the live state of the gateway: each upstream's circuit as
// the server holds it now (the store keeps only what a refresh recorded).
func (o statusOps) Status(ctx context.Context) (*admin.Status, error) {
	g := o.g
	ups, err := g.upstreams.Status(ctx)
	if err != nil {
		return nil, err
	}
	quarantined := map[string][]string{}
	for _, q := range g.upstreams.Quarantine() {
		quarantined[q.Tool.Upstream] = append(quarantined[q.Tool.Upstream], q.Tool.Name)
	}
	pending, err := g.inbox.Store().List(ctx, store.ApprovalFilter{State: store.StatePending, AllTenants: true, Limit: maxPendingCount})
	if err != nil {
		return nil, err
	}
	s := &admin.Status{
		Version: g.opts.Version, StartedAt: o.started, UptimeSeconds: time.Since(o.started).Round(time.Second).Seconds(),
		Listen: o.listen, Ready: g.ready.Load(), PendingApprovals: len(pending),
		Upstreams: make([]admin.UpstreamStatus, 0, len(ups)), Connectors: make([]admin.ConnectorState, 0, len(g.now().instances)),
	}
	for range g.mcp.Sessions() {
		s.Sessions++
	}
	for _, u := range ups {
		s.Upstreams = append(s.Upstreams, admin.UpstreamStatus{
			ID: u.ID, Transport: u.Transport, Origin: u.Origin, Circuit: u.Circuit, Sessions: u.Sessions, Tools: u.Tools,
			Quarantined: quarantined[u.ID], RefreshedAt: u.RefreshedAt, CheckedAt: u.CheckedAt, LastError: u.LastError,
		})
	}
	for _, in := range g.now().instances {
		s.Connectors = append(s.Connectors, admin.ConnectorState{
			ID: in.def.ID, Type: in.def.Type, Tenant: in.def.Tenant, Origin: in.def.Origin, Tools: len(in.conn.Tools()),
		})
	}
	return s, nil
}

var _ admin.StatusOps = statusOps{}
