package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/legate-mcp/legate/store"
)

// userStore keeps local accounts; it sees only password hashes.
type userStore struct{ db database }

func (s userStore) Create(ctx context.Context, u store.User) error {
	if u.CreatedAt.IsZero() {
		u.CreatedAt = time.Now()
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO users (name, tenant, role, profile, password_hash, disabled, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		u.Name, u.Tenant, u.Role, u.Profile, u.PasswordHash, boolInt(u.Disabled), u.CreatedAt.Unix())
	if s.db.duplicate(err) {
		return fmt.Errorf("user %q: %w", u.Name, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("storing user %q: %w", u.Name, err)
	}
	return nil
}

func (s userStore) Get(ctx context.Context, name string) (store.User, error) {
	u := store.User{Name: name}
	var disabled, created int64
	err := s.db.QueryRowContext(ctx, `SELECT tenant, role, profile, password_hash, disabled, created_at FROM users WHERE name = ?`, name).
		Scan(&u.Tenant, &u.Role, &u.Profile, &u.PasswordHash, &disabled, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return store.User{}, fmt.Errorf("user %q: %w", name, store.ErrNotFound)
	}
	if err != nil {
		return store.User{}, fmt.Errorf("reading user %q: %w", name, err)
	}
	u.Disabled, u.CreatedAt = disabled != 0, unixOr(created)
	return u, nil
}

func (s userStore) List(ctx context.Context) ([]store.User, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, tenant, role, profile, disabled, created_at FROM users ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("listing users: %w", err)
	}
	defer rows.Close()
	var out []store.User
	for rows.Next() {
		var u store.User
		var disabled, created int64
		if err := rows.Scan(&u.Name, &u.Tenant, &u.Role, &u.Profile, &disabled, &created); err != nil {
			return nil, fmt.Errorf("listing users: %w", err)
		}
		u.Disabled, u.CreatedAt = disabled != 0, unixOr(created)
		out = append(out, u)
	}
	return out, rows.Err()
}

func (s userStore) SetPassword(ctx context.Context, name, hash string) error {
	return s.update(ctx, name, `UPDATE users SET password_hash = ? WHERE name = ?`, hash, name)
}

func (s userStore) Update(ctx context.Context, u store.User) error {
	return s.update(ctx, u.Name, `UPDATE users SET tenant = ?, role = ?, profile = ?, password_hash = ? WHERE name = ?`, u.Tenant, u.Role, u.Profile, u.PasswordHash, u.Name)
}

func (s userStore) SetDisabled(ctx context.Context, name string, disabled bool) error {
	return s.update(ctx, name, `UPDATE users SET disabled = ? WHERE name = ?`, boolInt(disabled), name)
}

func (s userStore) update(ctx context.Context, name, query string, args ...any) error {
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("updating user %q: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("user %q: %w", name, store.ErrNotFound)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
