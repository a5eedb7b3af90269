package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/legate-mcp/legate/store"
)

type pinStore struct{ db database }

func (p pinStore) List(ctx context.Context) (map[string]map[string]store.Pin, error) {
	rows, err := p.db.QueryContext(ctx, `SELECT upstream_id, tool, hash, accepted_at, accepted_by FROM pins`)
	if err != nil {
		return nil, fmt.Errorf("reading pins: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]store.Pin{}
	for rows.Next() {
		var up, tool string
		var pin store.Pin
		var at int64
		if err := rows.Scan(&up, &tool, &pin.Hash, &at, &pin.AcceptedBy); err != nil {
			return nil, fmt.Errorf("reading pins: %w", err)
		}
		pin.AcceptedAt = time.Unix(at, 0).UTC()
		if out[up] == nil {
			out[up] = map[string]store.Pin{}
		}
		out[up][tool] = pin
	}
	return out, rows.Err()
}

func (p pinStore) Get(ctx context.Context, upstream, tool string) (store.Pin, error) {
	var pin store.Pin
	var def string
	var at int64
	err := p.db.QueryRowContext(ctx, `SELECT hash, definition, accepted_at, accepted_by FROM pins WHERE upstream_id = ? AND tool = ?`,
		upstream, tool).Scan(&pin.Hash, &def, &at, &pin.AcceptedBy)
	if errors.Is(err, sql.ErrNoRows) {
		return pin, fmt.Errorf("pin of %s in %s: %w", tool, upstream, store.ErrNotFound)
	}
	if err != nil {
		return pin, fmt.Errorf("reading pin of %s in %s: %w", tool, upstream, err)
	}
	pin.Definition, pin.AcceptedAt = []byte(def), time.Unix(at, 0).UTC()
	return pin, nil
}

func (p pinStore) Set(ctx context.Context, upstream, tool string, pin store.Pin, ifAbsent bool) error {
	if pin.AcceptedAt.IsZero() {
		pin.AcceptedAt = time.Now()
	}
	q := `INSERT INTO pins (upstream_id, tool, hash, definition, accepted_at, accepted_by) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (upstream_id, tool) DO UPDATE SET hash = excluded.hash, definition = excluded.definition,
		accepted_at = excluded.accepted_at, accepted_by = excluded.accepted_by`
	if ifAbsent {
		q = `INSERT INTO pins (upstream_id, tool, hash, definition, accepted_at, accepted_by) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (upstream_id, tool) DO NOTHING`
	}
	return p.db.tx(ctx, func(tx transaction) error {
		if _, err := tx.ExecContext(ctx, q, upstream, tool, pin.Hash, string(pin.Definition), pin.AcceptedAt.Unix(), pin.AcceptedBy); err != nil {
			return fmt.Errorf("pinning %s of %s: %w", tool, upstream, err)
		}
		if ifAbsent {
			return nil // a first pin changes nothing a server shows
		}
		return bumpVersion(ctx, tx) // a server picks up the acceptance
	})
}
