package cache

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/store"
)

// Refresh lists upstream id's tools (list), caches them in st, loads them
// (load) and returns what changed. A failure to list is recorded in the
// cache, unless the caller gave up (gaveUp reports it).
func Refresh(ctx context.Context, st store.UpstreamStore, id string, list func(context.Context) ([]*mcp.Tool, []string, error), gaveUp func() bool, load func([]store.CachedTool) error, log *slog.Logger) (Diff, error) {
	before, err := st.CacheOf(ctx, id)
	if err != nil {
		return Diff{}, err
	}
	listed, resources, err := list(ctx)
	if err != nil {
		if gaveUp() {
			// The caller gave up (shutting down), or the client session
			// to list on ended: no failure of the upstream's to record.
			return Diff{}, err
		}
		if serr := st.SaveCache(ctx, id, nil, nil, time.Time{}, err.Error()); serr != nil {
			log.Error("recording refresh failure", "upstream", id, "error", serr)
		}
		return Diff{}, err
	}
	rows, err := Rows(listed)
	if err != nil {
		return Diff{}, fmt.Errorf("upstream %s: %w", id, err)
	}
	old, err := st.CacheOf(ctx, id)
	if err != nil {
		return Diff{}, err
	}
	if !DiffOf(before.Tools, old.Tools).Empty() {
		// Another replica cached a listing while this one ran: writing
		// this over it could put back a tool set the upstream has left.
		// Its rows are taken instead; the next refresh lists again.
		return Diff{}, load(old.Tools)
	}
	d := DiffOf(old.Tools, rows)
	if err := st.SaveCache(ctx, id, rows, resources, time.Now(), ""); err != nil {
		return Diff{}, err
	}
	return d, load(rows)
}
