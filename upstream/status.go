package upstream

import (
	"context"

	"github.com/legate-mcp/legate/audit"
	"github.com/legate-mcp/legate/upstream/cache"
)

// Status is what `legate upstream list` shows of one upstream; the
// metrics read it too, so it is defined below both, in package audit.
type Status = audit.UpstreamStatus

// Status reports every upstream.
func (m *Manager) Status(ctx context.Context) ([]Status, error) {
	all, err := m.opts.Store.Cache(ctx)
	if err != nil {
		return nil, err
	}
	set := m.set.Load()
	shared := cache.SharedURIs(set.order, all)
	out := make([]Status, 0, len(set.order))
	for _, id := range set.order {
		u := set.byID[id]
		c := all[id]
		s := Status{
			ID: id, Transport: u.cfg.TransportName(), Origin: u.origin, Circuit: u.Circuit(),
			Sessions: u.pool.sessions(), Tools: len(*u.tools.Load()), Quarantined: len(*u.quarantined.Load()),
			RefreshedAt: c.RefreshedAt, CheckedAt: c.CheckedAt, LastError: c.LastError, SharedURIs: shared[id],
		}
		// A failed call is newer news than the last refresh's outcome.
		if f := u.lastFailure.Load(); f != nil && f.at.After(c.CheckedAt) {
			s.LastError, s.CheckedAt = f.text, f.at
		}
		if u.headerErr != nil {
			s.LastError = u.headerErr.Error()
		}
		out = append(out, s)
	}
	return out, nil
}
