package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/legate-mcp/legate/store"
)

type connectorStore struct{ db database }

func (c connectorStore) List(ctx context.Context) ([]store.Connector, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT id, type, config, credentials, access, created_at FROM connectors ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("listing connectors: %w", err)
	}
	defer rows.Close()
	var out []store.Connector
	for rows.Next() {
		var r store.Connector
		var cfg, creds, access string
		var created int64
		if err := rows.Scan(&r.ID, &r.Type, &cfg, &creds, &access, &created); err != nil {
			return nil, fmt.Errorf("listing connectors: %w", err)
		}
		r.Config, r.Credentials, r.Access, r.CreatedAt = []byte(cfg), []byte(creds), []byte(access), time.Unix(created, 0).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

func (c connectorStore) Get(ctx context.Context, id string) (store.Connector, error) {
	r := store.Connector{ID: id}
	var cfg, creds, access string
	var created int64
	err := c.db.QueryRowContext(ctx, `SELECT type, config, credentials, access, created_at FROM connectors WHERE id = ?`, id).Scan(&r.Type, &cfg, &creds, &access, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("connector %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("reading connector %q: %w", id, err)
	}
	r.Config, r.Credentials, r.Access, r.CreatedAt = []byte(cfg), []byte(creds), []byte(access), time.Unix(created, 0).UTC()
	return r, nil
}

func (c connectorStore) Create(ctx context.Context, r store.Connector) error {
	if r.CreatedAt.IsZero() {
		r.CreatedAt = time.Now()
	}
	_, err := c.db.ExecContext(ctx, `INSERT INTO connectors (id, type, config, credentials, access, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		r.ID, r.Type, orEmpty(r.Config), orEmpty(r.Credentials), orEmpty(r.Access), r.CreatedAt.Unix())
	if c.db.duplicate(err) {
		return fmt.Errorf("connector %q: %w", r.ID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("storing connector %q: %w", r.ID, err)
	}
	return nil
}

func (c connectorStore) Delete(ctx context.Context, id string) error {
	res, err := c.db.ExecContext(ctx, `DELETE FROM connectors WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("removing connector %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("connector %q: %w", id, store.ErrNotFound)
	}
	return nil
}

func orEmpty(b []byte) string {
	if len(b) == 0 {
		return "{}"
	}
	return string(b)
}
