package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/legate-mcp/legate/store"
)

type upstreamStore struct{ db *sql.DB }

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
	if duplicate(err) {
		return fmt.Errorf("upstream %q: %w", r.ID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("storing upstream %q: %w", r.ID, err)
	}
	return nil
}

func (u upstreamStore) Delete(ctx context.Context, id string) error {
	return u.tx(ctx, func(tx *sql.Tx) error {
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

// cache reads the caches of every upstream, or of the one named by only.
func (u upstreamStore) cache(ctx context.Context, only string) (map[string]store.UpstreamCache, error) {
	out := map[string]store.UpstreamCache{}
	rows, err := u.db.QueryContext(ctx, `SELECT id, refreshed_at, checked_at, last_error, resources FROM upstream_status WHERE ? = '' OR id = ?`, only, only)
	if err != nil {
		return nil, fmt.Errorf("reading tool cache: %w", err)
	}
	for rows.Next() {
		var id, lastErr, resources string
		var refreshed, checked int64
		if err := rows.Scan(&id, &refreshed, &checked, &lastErr, &resources); err != nil {
			rows.Close()
			return nil, fmt.Errorf("reading tool cache: %w", err)
		}
		c := store.UpstreamCache{RefreshedAt: unixOrZero(refreshed), CheckedAt: unixOrZero(checked), LastError: lastErr}
		json.Unmarshal([]byte(resources), &c.Resources)
		out[id] = c
	}
	rows.Close()
	rows, err = u.db.QueryContext(ctx, `SELECT upstream_id, name, definition, hash FROM upstream_tools
		WHERE ? = '' OR upstream_id = ? ORDER BY upstream_id, name`, only, only)
	if err != nil {
		return nil, fmt.Errorf("reading tool cache: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, def string
		var t store.CachedTool
		if err := rows.Scan(&id, &t.Name, &def, &t.Hash); err != nil {
			return nil, fmt.Errorf("reading tool cache: %w", err)
		}
		t.Definition = []byte(def)
		c := out[id]
		c.Tools = append(c.Tools, t)
		out[id] = c
	}
	return out, rows.Err()
}

func (u upstreamStore) SaveCache(ctx context.Context, id string, tools []store.CachedTool, resources []string, refreshed time.Time, lastErr string) error {
	return u.tx(ctx, func(tx *sql.Tx) error {
		now := time.Now().Unix()
		if tools != nil {
			if _, err := tx.ExecContext(ctx, `DELETE FROM upstream_tools WHERE upstream_id = ?`, id); err != nil {
				return err
			}
			for _, t := range tools {
				if _, err := tx.ExecContext(ctx, `INSERT INTO upstream_tools (upstream_id, name, definition, hash) VALUES (?, ?, ?, ?)`,
					id, t.Name, string(t.Definition), t.Hash); err != nil {
					return fmt.Errorf("caching tool %q of %q: %w", t.Name, id, err)
				}
			}
		}
		var ref int64
		if !refreshed.IsZero() {
			ref = refreshed.Unix()
		}
		res, _ := json.Marshal(resources)
		if resources == nil {
			res = nil // keep what is stored
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO upstream_status (id, refreshed_at, checked_at, last_error, resources) VALUES (?, ?, ?, ?, COALESCE(?, '[]'))
			ON CONFLICT (id) DO UPDATE SET refreshed_at = CASE WHEN excluded.refreshed_at > 0 THEN excluded.refreshed_at ELSE refreshed_at END,
			checked_at = excluded.checked_at, last_error = excluded.last_error,
			resources = CASE WHEN ? IS NULL THEN resources ELSE excluded.resources END`, id, ref, now, lastErr, nullable(res), nullable(res)); err != nil {
			return err
		}
		if tools == nil {
			return nil // a status alone changes nothing a server lists
		}
		return bumpVersion(ctx, tx)
	})
}

func (u upstreamStore) DeleteCache(ctx context.Context, id string) error {
	return u.tx(ctx, func(tx *sql.Tx) error { return deleteCache(ctx, tx, id) })
}

func deleteCache(ctx context.Context, tx *sql.Tx, id string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM upstream_tools WHERE upstream_id = ?`, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM upstream_status WHERE id = ?`, id); err != nil {
		return err
	}
	return bumpVersion(ctx, tx)
}

func bumpVersion(ctx context.Context, tx *sql.Tx) error {
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

func (u upstreamStore) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := u.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func nullable(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

func unixOrZero(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.Unix(v, 0).UTC()
}

var _ store.UpstreamStore = upstreamStore{}
