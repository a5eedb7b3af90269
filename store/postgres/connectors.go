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

type connectorStore struct{ db *pgxpool.Pool }

func (c connectorStore) List(ctx context.Context) ([]store.Connector, error) {
	rows, err := c.db.Query(ctx, `SELECT id, type, config, credentials, access, created_at FROM connectors ORDER BY id`)
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
	err := c.db.QueryRow(ctx, `SELECT type, config, credentials, access, created_at FROM connectors WHERE id = $1`, id).Scan(&r.Type, &cfg, &creds, &access, &created)
	if errors.Is(err, pgx.ErrNoRows) {
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
	_, err := c.db.Exec(ctx, `INSERT INTO connectors (id, type, config, credentials, access, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		r.ID, r.Type, jsonOr(r.Config), jsonOr(r.Credentials), jsonOr(r.Access), r.CreatedAt.Unix())
	if duplicate(err) {
		return fmt.Errorf("connector %q: %w", r.ID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("storing connector %q: %w", r.ID, err)
	}
	return nil
}

func (c connectorStore) Delete(ctx context.Context, id string) error {
	tag, err := c.db.Exec(ctx, `DELETE FROM connectors WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("removing connector %q: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("connector %q: %w", id, store.ErrNotFound)
	}
	return nil
}

var _ store.ConnectorStore = connectorStore{}
