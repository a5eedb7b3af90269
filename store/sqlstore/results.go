package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/legate-mcp/legate/store"
)

// resultStore keeps cut results for their callers; times in milliseconds.
type resultStore struct{ db database }

func (s resultStore) Put(ctx context.Context, r store.KeptResult) error {
	if r.CreatedAt.IsZero() {
		r.CreatedAt = time.Now()
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO kept_results (id, tenant, principal, tool, budget, created_at, expires_at, body)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Tenant, r.Principal, r.Tool, r.Budget, r.CreatedAt.UnixMilli(), r.ExpiresAt.UnixMilli(), r.Body)
	if s.db.duplicate(err) {
		return fmt.Errorf("kept result %s: %w", r.ID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("keeping result %s: %w", r.ID, err)
	}
	return nil
}

func (s resultStore) Get(ctx context.Context, id, tenant, principal string, now time.Time) (store.KeptResult, error) {
	r := store.KeptResult{ID: id, Tenant: tenant, Principal: principal}
	var created, expires int64
	err := s.db.QueryRowContext(ctx, `SELECT tool, budget, created_at, expires_at, body FROM kept_results
		WHERE id = ? AND tenant = ? AND principal = ? AND expires_at > ?`, id, tenant, principal, now.UnixMilli()).
		Scan(&r.Tool, &r.Budget, &created, &expires, &r.Body)
	if errors.Is(err, sql.ErrNoRows) {
		return store.KeptResult{}, fmt.Errorf("kept result %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.KeptResult{}, fmt.Errorf("reading kept result %q: %w", id, err)
	}
	r.CreatedAt, r.ExpiresAt = time.UnixMilli(created).UTC(), time.UnixMilli(expires).UTC()
	return r, nil
}

func (s resultStore) Prune(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM kept_results WHERE expires_at < ?`, before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("pruning kept results: %w", err)
	}
	return res.RowsAffected()
}
