package sources

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream"
)

// UpstreamDefs merges the upstreams of the config file and of the store.
func UpstreamDefs(ctx context.Context, cfg *config.File, st store.Store) ([]upstream.Def, error) {
	var defs []upstream.Def
	file := "config"
	if cfg != nil && cfg.Path != "" {
		file = cfg.Path
	}
	if cfg != nil {
		for i, u := range cfg.Upstreams {
			defs = append(defs, upstream.Def{Config: u, Origin: fmt.Sprintf("%s upstreams[%d]", file, i)})
		}
	}
	stored, err := st.Upstreams().List(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range stored {
		d, err := StoredUpstream(s)
		if err != nil {
			return nil, err
		}
		defs = append(defs, d)
	}
	return defs, nil
}

// StoredOrigin is the Origin of a connector instance or upstream stored
// at t: "the store, added 2026-11-30 12:00". It has no parentheses of its
// own, so that "connector "api" (ORIGIN)" reads plainly.
func StoredOrigin(t time.Time) string {
	return "the store, added " + t.Format("2006-01-02 15:04")
}

// StoredUpstream decodes and validates a stored upstream definition.
func StoredUpstream(s store.Upstream) (upstream.Def, error) {
	d := upstream.Def{Origin: StoredOrigin(s.CreatedAt)}
	if err := json.Unmarshal(s.Definition, &d.Config); err != nil {
		return d, fmt.Errorf("stored upstream %q: %w", s.ID, err)
	}
	if errs := d.Config.Validate(fmt.Sprintf("stored upstream %q", s.ID)); len(errs) > 0 {
		return d, errs[0]
	}
	return d, nil
}
