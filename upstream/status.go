package upstream

import (
	"context"
	"fmt"
	"slices"

	"github.com/legate-mcp/legate/audit"
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
	owners := map[string][]string{}
	for _, id := range set.order {
		for _, uri := range all[id].Resources {
			owners[uri] = append(owners[uri], id)
		}
	}
	out := make([]Status, 0, len(set.order))
	for _, id := range set.order {
		u := set.byID[id]
		c := all[id]
		s := Status{
			ID: id, Transport: u.cfg.TransportName(), Origin: u.origin, Circuit: u.Circuit(),
			Sessions: u.pool.sessions(), Tools: len(*u.tools.Load()), Quarantined: len(*u.quarantined.Load()),
			RefreshedAt: c.RefreshedAt, CheckedAt: c.CheckedAt, LastError: c.LastError,
		}
		// A failed call is newer news than the last refresh's outcome.
		if f := u.lastFailure.Load(); f != nil && f.at.After(c.CheckedAt) {
			s.LastError, s.CheckedAt = f.text, f.at
		}
		if u.headerErr != nil {
			s.LastError = u.headerErr.Error()
		}
		for _, uri := range c.Resources {
			if len(owners[uri]) > 1 {
				s.SharedURIs = append(s.SharedURIs, fmt.Sprintf("%s (also %v)", uri, slices.DeleteFunc(slices.Clone(owners[uri]), func(o string) bool { return o == id })))
			}
		}
		out = append(out, s)
	}
	return out, nil
}
