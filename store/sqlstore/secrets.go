package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/legate-mcp/legate/store"
)

// secretStore keeps vault rows; it never sees a value, only ciphertext and
// wrapped data keys.
type secretStore struct{ db database }

func (s secretStore) Create(ctx context.Context, r store.Secret) error {
	if r.CreatedAt.IsZero() {
		r.CreatedAt = time.Now()
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO secrets (tenant, name, version, key_id, wrapped_key, ciphertext, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		r.Tenant, r.Name, r.Version, r.KeyID, r.WrappedKey, r.Ciphertext, r.CreatedAt.Unix())
	if s.db.duplicate(err) {
		return fmt.Errorf("secret %q version %d: %w", r.Name, r.Version, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("storing secret %q: %w", r.Name, err)
	}
	return nil
}

func (s secretStore) Get(ctx context.Context, tenant, name string, version int) (store.Secret, error) {
	r := store.Secret{Tenant: tenant, Name: name}
	var created int64
	err := s.db.QueryRowContext(ctx, `SELECT version, key_id, wrapped_key, ciphertext, created_at FROM secrets
		WHERE tenant = ? AND name = ? AND (? = 0 OR version = ?) ORDER BY version DESC LIMIT 1`, tenant, name, version, version).
		Scan(&r.Version, &r.KeyID, &r.WrappedKey, &r.Ciphertext, &created)
	if errors.Is(err, sql.ErrNoRows) {
		if version != 0 {
			return r, fmt.Errorf("secret %q version %d: %w", name, version, store.ErrNotFound)
		}
		return r, fmt.Errorf("secret %q: %w", name, store.ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("reading secret %q: %w", name, err)
	}
	r.CreatedAt = time.Unix(created, 0).UTC()
	return r, nil
}

func (s secretStore) List(ctx context.Context) ([]store.Secret, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT tenant, name, version, key_id, created_at FROM secrets ORDER BY tenant, name, version`)
	if err != nil {
		return nil, fmt.Errorf("listing secrets: %w", err)
	}
	defer rows.Close()
	var out []store.Secret
	for rows.Next() {
		var r store.Secret
		var created int64
		if err := rows.Scan(&r.Tenant, &r.Name, &r.Version, &r.KeyID, &created); err != nil {
			return nil, fmt.Errorf("listing secrets: %w", err)
		}
		r.CreatedAt = time.Unix(created, 0).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

func (s secretStore) Delete(ctx context.Context, tenant, name string) (int, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM secrets WHERE tenant = ? AND name = ?`, tenant, name)
	if err != nil {
		return 0, fmt.Errorf("removing secret %q: %w", name, err)
	}
	n, _ := res.RowsAffected()
	if n == 0 {
		return 0, fmt.Errorf("secret %q: %w", name, store.ErrNotFound)
	}
	return int(n), nil
}

func (s secretStore) DeleteBefore(ctx context.Context, tenant, name string, version int) (int, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM secrets WHERE tenant = ? AND name = ? AND version < ?`, tenant, name, version)
	if err != nil {
		return 0, fmt.Errorf("removing old versions of secret %q: %w", name, err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

func (s secretStore) KeyUsage(ctx context.Context) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT key_id, COUNT(*) FROM secrets GROUP BY key_id`)
	if err != nil {
		return nil, fmt.Errorf("counting secrets by key: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("counting secrets by key: %w", err)
		}
		out[id] = n
	}
	return out, rows.Err()
}

func (s secretStore) NotWrappedBy(ctx context.Context, keyID string, limit int) ([]store.Secret, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT tenant, name, version, key_id, wrapped_key, created_at FROM secrets
		WHERE key_id <> ? ORDER BY tenant, name, version LIMIT ?`, keyID, limit)
	if err != nil {
		return nil, fmt.Errorf("listing secrets to re-wrap: %w", err)
	}
	defer rows.Close()
	var out []store.Secret
	for rows.Next() {
		var r store.Secret
		var created int64
		if err := rows.Scan(&r.Tenant, &r.Name, &r.Version, &r.KeyID, &r.WrappedKey, &created); err != nil {
			return nil, fmt.Errorf("listing secrets to re-wrap: %w", err)
		}
		r.CreatedAt = time.Unix(created, 0).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

func (s secretStore) Rewrap(ctx context.Context, changes []store.SecretRewrap) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("re-wrapping secrets: %w", err)
	}
	defer tx.Rollback()
	changed := 0
	for _, c := range changes {
		res, err := tx.ExecContext(ctx, `UPDATE secrets SET key_id = ?, wrapped_key = ?
			WHERE tenant = ? AND name = ? AND version = ? AND key_id = ? AND wrapped_key = ?`,
			c.KeyID, c.WrappedKey, c.Old.Tenant, c.Old.Name, c.Old.Version, c.Old.KeyID, c.Old.WrappedKey)
		if err != nil {
			return 0, fmt.Errorf("re-wrapping secret %q version %d: %w", c.Old.Name, c.Old.Version, err)
		}
		n, _ := res.RowsAffected()
		changed += int(n)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("re-wrapping secrets: %w", err)
	}
	return changed, nil
}
