package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/legate-mcp/legate/store"
)

// userStore keeps local accounts; it sees only password hashes.
type userStore struct{ db *pgxpool.Pool }

func (s userStore) Create(ctx context.Context, u store.User) error {
	if u.CreatedAt.IsZero() {
		u.CreatedAt = time.Now()
	}
	_, err := s.db.Exec(ctx, `INSERT INTO users (name, tenant, role, profile, password_hash, disabled, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		u.Name, u.Tenant, u.Role, u.Profile, u.PasswordHash, boolInt(u.Disabled), u.CreatedAt.Unix())
	if duplicate(err) {
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
	err := s.db.QueryRow(ctx, `SELECT tenant, role, profile, password_hash, disabled, created_at FROM users WHERE name = $1`, name).
		Scan(&u.Tenant, &u.Role, &u.Profile, &u.PasswordHash, &disabled, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.User{}, fmt.Errorf("user %q: %w", name, store.ErrNotFound)
	}
	if err != nil {
		return store.User{}, fmt.Errorf("reading user %q: %w", name, err)
	}
	u.Disabled, u.CreatedAt = disabled != 0, unixOr(created)
	return u, nil
}

func (s userStore) List(ctx context.Context) ([]store.User, error) {
	rows, err := s.db.Query(ctx, `SELECT name, tenant, role, profile, disabled, created_at FROM users ORDER BY name`)
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
	return s.update(ctx, name, `UPDATE users SET password_hash = $1 WHERE name = $2`, hash, name)
}

func (s userStore) Update(ctx context.Context, u store.User) error {
	return s.update(ctx, u.Name, `UPDATE users SET tenant = $1, role = $2, profile = $3, password_hash = $4 WHERE name = $5`, u.Tenant, u.Role, u.Profile, u.PasswordHash, u.Name)
}

func (s userStore) SetDisabled(ctx context.Context, name string, disabled bool) error {
	return s.update(ctx, name, `UPDATE users SET disabled = $1 WHERE name = $2`, boolInt(disabled), name)
}

func (s userStore) update(ctx context.Context, name, query string, args ...any) error {
	tag, err := s.db.Exec(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("updating user %q: %w", name, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("user %q: %w", name, store.ErrNotFound)
	}
	return nil
}

// boolInt is b as the 0 or 1 the tables keep.
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

var _ store.UserStore = userStore{}
