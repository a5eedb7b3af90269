// Package agentruns is the agent's history on PostgreSQL: the agent_runs
// table, which the store's migrations create (version 3), kept apart from
// the store's other tables.
package agentruns

import (
	"context"
	"errors"
	"fmt"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"time"

	"github.com/legate-mcp/legate/store"
)

// Store keeps the agent's history; times in milliseconds.
type Store struct{ DB *pgxpool.Pool }

func (s Store) Put(ctx context.Context, r store.AgentRun) error {
	if r.UpdatedAt.IsZero() {
		r.UpdatedAt = time.Now()
	}
	_, err := s.DB.Exec(ctx, `INSERT INTO agent_runs (id, principal, tenant, instruction, stopped, started_at, updated_at, record)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (id) DO UPDATE SET principal = excluded.principal, tenant = excluded.tenant, instruction = excluded.instruction,
			stopped = excluded.stopped, started_at = excluded.started_at, updated_at = excluded.updated_at, record = excluded.record`,
		r.ID, r.Principal, r.Tenant, r.Instruction, r.Stopped, r.StartedAt.UnixMilli(), r.UpdatedAt.UnixMilli(), r.Record)
	if err != nil {
		return fmt.Errorf("storing agent run %s: %w", r.ID, err)
	}
	return nil
}

func (s Store) Get(ctx context.Context, id string) (store.AgentRun, error) {
	r := store.AgentRun{ID: id}
	var started, updated int64
	err := s.DB.QueryRow(ctx, `SELECT principal, tenant, instruction, stopped, started_at, updated_at, record FROM agent_runs WHERE id = $1`, id).
		Scan(&r.Principal, &r.Tenant, &r.Instruction, &r.Stopped, &started, &updated, &r.Record)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.AgentRun{}, fmt.Errorf("agent run %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.AgentRun{}, fmt.Errorf("reading agent run %q: %w", id, err)
	}
	r.StartedAt, r.UpdatedAt = time.UnixMilli(started).UTC(), time.UnixMilli(updated).UTC()
	return r, nil
}

func (s Store) List(ctx context.Context, f store.AgentRunFilter) ([]store.AgentRun, error) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	rows, err := s.DB.Query(ctx, `SELECT id, principal, tenant, instruction, stopped, started_at, updated_at FROM agent_runs
		WHERE ($1 = '' OR principal = $1) AND ($2 = '' OR tenant = $2) ORDER BY started_at DESC, id DESC LIMIT $3`,
		f.Principal, f.Tenant, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("listing agent runs: %w", err)
	}
	defer rows.Close()
	var out []store.AgentRun
	for rows.Next() {
		var r store.AgentRun
		var started, updated int64
		if err := rows.Scan(&r.ID, &r.Principal, &r.Tenant, &r.Instruction, &r.Stopped, &started, &updated); err != nil {
			return nil, fmt.Errorf("listing agent runs: %w", err)
		}
		r.StartedAt, r.UpdatedAt = time.UnixMilli(started).UTC(), time.UnixMilli(updated).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

var _ store.AgentRunStore = Store{}
