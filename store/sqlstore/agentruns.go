package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/legate-mcp/legate/store"
)

// agentRunStore keeps the agent's history; times in milliseconds.
type agentRunStore struct{ db database }

func (s agentRunStore) Put(ctx context.Context, r store.AgentRun) error {
	if r.UpdatedAt.IsZero() {
		r.UpdatedAt = time.Now()
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO agent_runs (id, principal, tenant, instruction, stopped, started_at, updated_at, record)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET principal = excluded.principal, tenant = excluded.tenant, instruction = excluded.instruction,
			stopped = excluded.stopped, started_at = excluded.started_at, updated_at = excluded.updated_at, record = excluded.record`,
		r.ID, r.Principal, r.Tenant, r.Instruction, r.Stopped, r.StartedAt.UnixMilli(), r.UpdatedAt.UnixMilli(), r.Record)
	if err != nil {
		return fmt.Errorf("storing agent run %s: %w", r.ID, err)
	}
	return nil
}

func (s agentRunStore) Get(ctx context.Context, id string) (store.AgentRun, error) {
	r := store.AgentRun{ID: id}
	var started, updated int64
	err := s.db.QueryRowContext(ctx, `SELECT principal, tenant, instruction, stopped, started_at, updated_at, record FROM agent_runs WHERE id = ?`, id).
		Scan(&r.Principal, &r.Tenant, &r.Instruction, &r.Stopped, &started, &updated, &r.Record)
	if errors.Is(err, sql.ErrNoRows) {
		return store.AgentRun{}, fmt.Errorf("agent run %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.AgentRun{}, fmt.Errorf("reading agent run %q: %w", id, err)
	}
	r.StartedAt, r.UpdatedAt = time.UnixMilli(started).UTC(), time.UnixMilli(updated).UTC()
	return r, nil
}

func (s agentRunStore) List(ctx context.Context, f store.AgentRunFilter) ([]store.AgentRun, error) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, principal, tenant, instruction, stopped, started_at, updated_at FROM agent_runs
		WHERE (? = '' OR principal = ?) AND (? = '' OR tenant = ?) ORDER BY started_at DESC, id DESC LIMIT ?`,
		f.Principal, f.Principal, f.Tenant, f.Tenant, f.Limit)
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

func (s agentRunStore) Prune(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM agent_runs WHERE stopped <> 'running' AND updated_at < ?`, before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("pruning agent runs: %w", err)
	}
	return res.RowsAffected()
}
