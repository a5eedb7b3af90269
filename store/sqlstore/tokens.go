package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/legate-mcp/legate/store"
)

// tokenStore keeps static tokens; it sees only their hashes.
type tokenStore struct{ db database }

func (s tokenStore) Create(ctx context.Context, t store.Token) error {
	if t.CreatedAt.IsZero() {
		t.CreatedAt = time.Now()
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO tokens (name, hash, tenant, role, profile, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		t.Name, t.Hash, t.Tenant, t.Role, t.Profile, t.CreatedAt.Unix())
	if s.db.duplicate(err) {
		return fmt.Errorf("token %q: %w", t.Name, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("storing token %q: %w", t.Name, err)
	}
	return nil
}

func (s tokenStore) ByHash(ctx context.Context, hash string) (store.Token, error) {
	t := store.Token{Hash: hash}
	var created, revoked int64
	err := s.db.QueryRowContext(ctx, `SELECT name, tenant, role, profile, created_at, revoked_at FROM tokens WHERE hash = ?`, hash).
		Scan(&t.Name, &t.Tenant, &t.Role, &t.Profile, &created, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Token{}, fmt.Errorf("token: %w", store.ErrNotFound)
	}
	if err != nil {
		return store.Token{}, fmt.Errorf("reading token: %w", err)
	}
	t.CreatedAt, t.RevokedAt = unixOr(created), unixOr(revoked)
	return t, nil
}

func (s tokenStore) List(ctx context.Context) ([]store.Token, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, tenant, role, profile, created_at, revoked_at FROM tokens ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("listing tokens: %w", err)
	}
	defer rows.Close()
	var out []store.Token
	for rows.Next() {
		var t store.Token
		var created, revoked int64
		if err := rows.Scan(&t.Name, &t.Tenant, &t.Role, &t.Profile, &created, &revoked); err != nil {
			return nil, fmt.Errorf("listing tokens: %w", err)
		}
		t.CreatedAt, t.RevokedAt = unixOr(created), unixOr(revoked)
		out = append(out, t)
	}
	return out, rows.Err()
}

func (s tokenStore) Revoke(ctx context.Context, name string, at time.Time) error {
	if at.Unix() <= 0 {
		at = time.Now()
	}
	res, err := s.db.ExecContext(ctx, `UPDATE tokens SET revoked_at = ? WHERE name = ? AND revoked_at = 0`, at.Unix(), name)
	if err != nil {
		return fmt.Errorf("revoking token %q: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	var revoked int64
	err = s.db.QueryRowContext(ctx, `SELECT revoked_at FROM tokens WHERE name = ?`, name).Scan(&revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("token %q: %w", name, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("revoking token %q: %w", name, err)
	}
	return fmt.Errorf("token %q was revoked at %s: %w", name, unixOr(revoked).Format(time.RFC3339), store.ErrConflict)
}
