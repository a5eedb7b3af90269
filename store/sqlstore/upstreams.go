package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/legate-mcp/legate/store"
)

type upstreamStore struct{ db database }

func (u upstreamStore) List(ctx context.Context) ([]store.Upstream, error) {
	rows, err := u.db.QueryContext(ctx, `SELECT id, definition, created_at FROM upstreams ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("listing upstreams: %w", err)
	}
	defer rows.Close()
	var out []store.Upstream
	for rows.Next() {
		var r store.Upstream
		var def string
		var created int64
		if err := rows.Scan(&r.ID, &def, &created); err != nil {
			return nil, fmt.Errorf("listing upstreams: %w", err)
		}
		r.Definition, r.CreatedAt = []byte(def), time.Unix(created, 0).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

func (u upstreamStore) Create(ctx context.Context, r store.Upstream) error {
	if r.CreatedAt.IsZero() {
		r.CreatedAt = time.Now()
	}
	_, err := u.db.ExecContext(ctx, `INSERT INTO upstreams (id, definition, created_at) VALUES (?, ?, ?)`, r.ID, string(r.Definition), r.CreatedAt.Unix())
	if u.db.duplicate(err) {
		return fmt.Errorf("upstream %q: %w", r.ID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("storing upstream %q: %w", r.ID, err)
	}
	return nil
}

func (u upstreamStore) Delete(ctx context.Context, id string) error {
	return u.db.tx(ctx, func(tx transaction) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM upstreams WHERE id = ?`, id)
		if err != nil {
			return fmt.Errorf("removing upstream %q: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("upstream %q: %w", id, store.ErrNotFound)
		}
		return deleteCache(ctx, tx, id)
	})
}

func (u upstreamStore) Cache(ctx context.Context) (map[string]store.UpstreamCache, error) {
	return u.cache(ctx, "")
}

func (u upstreamStore) CacheOf(ctx context.Context, id string) (store.UpstreamCache, error) {
	all, err := u.cache(ctx, id)
	return all[id], err
}

// cache reads the caches of every upstream, or of the one named by only,
// in the dialect's Snapshot: a refresh committing between the two reads
// must not pair one status with another tool list.
func (u upstreamStore) cache(ctx context.Context, only string) (map[string]store.UpstreamCache, error) {
	out := map[string]store.UpstreamCache{}
	err := u.db.read(ctx, func(q querier) error {
		rows, err := q.QueryContext(ctx, `SELECT id, refreshed_at, checked_at, last_error, resources FROM upstream_status WHERE ? = '' OR id = ?`, only, only)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id, lastErr, resources string
			var refreshed, checked int64
			if err := rows.Scan(&id, &refreshed, &checked, &lastErr, &resources); err != nil {
				rows.Close()
				return err
			}
			c := store.UpstreamCache{RefreshedAt: unixOr(refreshed), CheckedAt: unixOr(checked), LastError: lastErr}
			json.Unmarshal([]byte(resources), &c.Resources)
			out[id] = c
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = q.QueryContext(ctx, `SELECT upstream_id, name, definition, hash FROM upstream_tools
			WHERE ? = '' OR upstream_id = ? ORDER BY upstream_id, name`, only, only)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, def string
			var t store.CachedTool
			if err := rows.Scan(&id, &t.Name, &def, &t.Hash); err != nil {
				return err
			}
			t.Definition = []byte(def)
			c := out[id]
			c.Tools = append(c.Tools, t)
			out[id] = c
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("reading tool cache: %w", err)
	}
	return out, nil
}

// SaveCache first bumps the cache version when the tools change: that
// row's lock serialises the processes refreshing at once (a refresh
// deletes and re-inserts an upstream's rows, which two transactions must
// not interleave), and the new version tells every process to reload.
func (u upstreamStore) SaveCache(ctx context.Context, id string, tools []store.CachedTool, resources []string, refreshed time.Time, lastErr string) error {
	return u.db.tx(ctx, func(tx transaction) error {
		if tools != nil { // a status alone changes nothing a server lists
			if err := bumpVersion(ctx, tx); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM upstream_tools WHERE upstream_id = ?`, id); err != nil {
				return err
			}
			if err := insertRows(ctx, tx, `INSERT INTO upstream_tools (upstream_id, name, definition, hash)`, 4, len(tools), func(args []any, i int) []any {
				return append(args, id, tools[i].Name, string(tools[i].Definition), tools[i].Hash)
			}); err != nil {
				return fmt.Errorf("caching the tools of %q: %w", id, err)
			}
		}
		var ref int64
		if !refreshed.IsZero() {
			ref = refreshed.Unix()
		}
		var res *string // nil keeps what is stored
		if resources != nil {
			b, _ := json.Marshal(resources)
			s := string(b)
			res = &s
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO upstream_status (id, refreshed_at, checked_at, last_error, resources) VALUES (?, ?, ?, ?, COALESCE(CAST(? AS TEXT), '[]'))
			ON CONFLICT (id) DO UPDATE SET
			refreshed_at = CASE WHEN excluded.refreshed_at > 0 THEN excluded.refreshed_at ELSE upstream_status.refreshed_at END,
			checked_at = excluded.checked_at, last_error = excluded.last_error,
			resources = CASE WHEN CAST(? AS TEXT) IS NULL THEN upstream_status.resources ELSE excluded.resources END`,
			id, ref, time.Now().Unix(), lastErr, res, res)
		return err
	})
}

func (u upstreamStore) DeleteCache(ctx context.Context, id string) error {
	return u.db.tx(ctx, func(tx transaction) error { return deleteCache(ctx, tx, id) })
}

func deleteCache(ctx context.Context, tx transaction, id string) error {
	if err := bumpVersion(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM upstream_tools WHERE upstream_id = ?`, id); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM upstream_status WHERE id = ?`, id)
	return err
}

func bumpVersion(ctx context.Context, tx transaction) error {
	_, err := tx.ExecContext(ctx, `UPDATE cache_version SET version = version + 1 WHERE id = 1`)
	return err
}

func (u upstreamStore) CacheVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := u.db.QueryRowContext(ctx, `SELECT version FROM cache_version WHERE id = 1`).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading cache version: %w", err)
	}
	return v, nil
}
