package upstream

import (
	"context"
	"fmt"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream/cache"
)

// Pinning (package cache): a definition that differs from its pin is
// quarantined, neither listed nor callable, until accepted.

// Quarantine lists the quarantined tools.
func (m *Manager) Quarantine() []Quarantined { return *m.quarantine.Load() }

// load sets u's tools and quarantine from its cached rows and pins,
// pinning new definitions on first sight (pin: tofu). m.reloadMu is held.
func (m *Manager) load(ctx context.Context, u *Upstream, rows []store.CachedTool, pins map[string]store.Pin) error {
	tools, quarantined, err := cache.Pin(ctx, u.cfg, rows, pins, m.opts.Pins, m.log, func(q Quarantined) {
		if _, seen := m.reported.LoadOrStore(u.cfg.ID+"/"+q.Tool.Name+"/"+q.Tool.Hash, struct{}{}); !seen && m.opts.OnQuarantine != nil {
			m.opts.OnQuarantine(q)
		}
	})
	if err != nil {
		return err
	}
	u.tools.Store(&tools)
	u.quarantined.Store(&quarantined)
	return nil
}

// publish gathers the quarantine and, if the tool set changed, calls
// OnToolsChanged; it reports whether it did. m.reloadMu is held.
func (m *Manager) publish() bool {
	var fp []byte
	quarantined := []Quarantined{}
	set := m.set.Load()
	for _, id := range set.order {
		u := set.byID[id]
		for _, t := range *u.tools.Load() {
			fp = fmt.Appendf(fp, "%s/%s/%s;", id, t.Name, t.Hash)
		}
		for _, q := range *u.quarantined.Load() {
			fp = fmt.Appendf(fp, "q:%s/%s/%s;", id, q.Tool.Name, q.Tool.Hash)
			quarantined = append(quarantined, q)
		}
	}
	m.quarantine.Store(&quarantined)
	old, _ := m.toolsHash.Swap(string(fp)).(string)
	changed := old != string(fp)
	if changed && m.opts.OnToolsChanged != nil {
		m.opts.OnToolsChanged()
	}
	return changed
}

// Accept pins the current definitions of an upstream's tools (all of them
// when tools is empty), releasing them from quarantine, and returns the
// names accepted.
func (m *Manager) Accept(ctx context.Context, id, by string, tools ...string) ([]string, error) {
	if _, ok := m.Upstream(id); !ok {
		return nil, fmt.Errorf("no upstream %q", id)
	}
	all, err := m.opts.Store.Cache(ctx)
	if err != nil {
		return nil, err
	}
	accepted, err := cache.Accept(ctx, m.opts.Pins, id, by, all[id].Tools, tools)
	if err != nil {
		return accepted, err
	}
	_, err = m.reload(ctx)
	return accepted, err
}
