package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/legate-mcp/legate/store"
)

// upstreamStore keeps upstream definitions and their tool caches. Every
// change of a cache first bumps the cache version: that row's lock
// serialises the replicas refreshing at once (a refresh deletes and
// re-inserts an upstream's rows, which two transactions must not
// interleave), and the new version tells every replica to reload.
type upstreamStore struct{ db *pgxpool.Pool }

func (u upstreamStore) List(ctx context.Context) ([]store.Upstream, error) {
	rows, err := u.db.Query(ctx, `SELECT id, definition, created_at FROM upstreams ORDER BY id`)
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
	_, err := u.db.Exec(ctx, `INSERT INTO upstreams (id, definition, created_at) VALUES ($1, $2, $3)`, r.ID, string(r.Definition), r.CreatedAt.Unix())
	if duplicate(err) {
		return fmt.Errorf("upstream %q: %w", r.ID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("storing upstream %q: %w", r.ID, err)
	}
	return nil
}

func (u upstreamStore) Delete(ctx context.Context, id string) error {
	return pgx.BeginFunc(ctx, u.db, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM upstreams WHERE id = $1`, id)
		if err != nil {
			return fmt.Errorf("removing upstream %q: %w", id, err)
		}
		if tag.RowsAffected() == 0 {
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
// in one transaction: a refresh committing between the two reads must not
// pair one status with another tool list.
func (u upstreamStore) cache(ctx context.Context, only string) (map[string]store.UpstreamCache, error) {
	out := map[string]store.UpstreamCache{}
	err := pgx.BeginTxFunc(ctx, u.db, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, refreshed_at, checked_at, last_error, resources FROM upstream_status WHERE $1 = '' OR id = $1`, only)
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
		if err := rows.Err(); err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `SELECT upstream_id, name, definition, hash FROM upstream_tools
			WHERE $1 = '' OR upstream_id = $1 ORDER BY upstream_id, name`, only)
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

func (u upstreamStore) SaveCache(ctx context.Context, id string, tools []store.CachedTool, resources []string, refreshed time.Time, lastErr string) error {
	return pgx.BeginFunc(ctx, u.db, func(tx pgx.Tx) error {
		if tools != nil {
			if err := bumpVersion(ctx, tx); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM upstream_tools WHERE upstream_id = $1`, id); err != nil {
				return err
			}
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"upstream_tools"}, []string{"upstream_id", "name", "definition", "hash"},
				pgx.CopyFromSlice(len(tools), func(i int) ([]any, error) {
					return []any{id, tools[i].Name, string(tools[i].Definition), tools[i].Hash}, nil
				})); err != nil {
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
		_, err := tx.Exec(ctx, `INSERT INTO upstream_status (id, refreshed_at, checked_at, last_error, resources) VALUES ($1, $2, $3, $4, COALESCE($5::text, '[]'))
			ON CONFLICT (id) DO UPDATE SET
			refreshed_at = CASE WHEN excluded.refreshed_at > 0 THEN excluded.refreshed_at ELSE upstream_status.refreshed_at END,
			checked_at = excluded.checked_at, last_error = excluded.last_error,
			resources = CASE WHEN $5::text IS NULL THEN upstream_status.resources ELSE excluded.resources END`,
			id, ref, time.Now().Unix(), lastErr, res)
		return err
	})
}

func (u upstreamStore) DeleteCache(ctx context.Context, id string) error {
	return pgx.BeginFunc(ctx, u.db, func(tx pgx.Tx) error { return deleteCache(ctx, tx, id) })
}

func deleteCache(ctx context.Context, tx pgx.Tx, id string) error {
	if err := bumpVersion(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM upstream_tools WHERE upstream_id = $1`, id); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM upstream_status WHERE id = $1`, id)
	return err
}

func bumpVersion(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `UPDATE cache_version SET version = version + 1 WHERE id = 1`)
	return err
}

func (u upstreamStore) CacheVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := u.db.QueryRow(ctx, `SELECT version FROM cache_version WHERE id = 1`).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading cache version: %w", err)
	}
	return v, nil
}

var _ store.UpstreamStore = upstreamStore{}
