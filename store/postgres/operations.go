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

// operationStore keeps idempotency records. Begin inserts the record if
// it is new (ON CONFLICT DO NOTHING: of racing inserts one wins) and
// otherwise locks it (SELECT ... FOR UPDATE) before it decides: of racing
// callers, the second reads the row as the first left it.
type operationStore struct{ db *pgxpool.Pool }

func (o operationStore) Begin(ctx context.Context, scope, key string, now time.Time, lease time.Duration) (store.Operation, error) {
	var op store.Operation
	err := pgx.BeginFunc(ctx, o.db, func(tx pgx.Tx) error {
		op = store.Operation{State: store.OpNew, Attempts: 1, Started: now, LeaseUntil: now.Add(lease)}
		tag, err := tx.Exec(ctx, `INSERT INTO operations (scope, key, attempts, started_at, lease_until) VALUES ($1, $2, 1, $3, $4)
			ON CONFLICT (scope, key) DO NOTHING`, scope, key, op.Started.UnixMilli(), op.LeaseUntil.UnixMilli())
		if err != nil || tag.RowsAffected() == 1 {
			return err
		}
		var started, until, done int64
		var outcome []byte
		if err := tx.QueryRow(ctx, `SELECT attempts, started_at, lease_until, done, outcome FROM operations WHERE scope = $1 AND key = $2 FOR UPDATE`,
			scope, key).Scan(&op.Attempts, &started, &until, &done, &outcome); err != nil {
			return err
		}
		op.Started, op.LeaseUntil = time.UnixMilli(started).UTC(), time.UnixMilli(until).UTC()
		switch {
		case done != 0:
			op.State, op.Outcome, op.LeaseUntil = store.OpDone, outcome, time.Time{}
			return nil
		case until > now.UnixMilli():
			op.State = store.OpBusy
			return nil
		}
		op.State, op.Attempts, op.LeaseUntil = store.OpRetry, op.Attempts+1, now.Add(lease)
		_, err = tx.Exec(ctx, `UPDATE operations SET attempts = $1, lease_until = $2 WHERE scope = $3 AND key = $4`,
			op.Attempts, op.LeaseUntil.UnixMilli(), scope, key)
		return err
	})
	if err != nil {
		return store.Operation{}, fmt.Errorf("claiming operation %s of %s: %w", key, scope, err)
	}
	if op.State != store.OpDone {
		op.Started, op.LeaseUntil = op.Started.Truncate(time.Millisecond).UTC(), op.LeaseUntil.Truncate(time.Millisecond).UTC()
	}
	return op, nil
}

func (o operationStore) Finish(ctx context.Context, scope, key string, outcome []byte, _ time.Time) error {
	if outcome == nil {
		outcome = []byte{}
	}
	tag, err := o.db.Exec(ctx, `UPDATE operations SET done = 1, outcome = $1, lease_until = 0 WHERE scope = $2 AND key = $3 AND done = 0`,
		outcome, scope, key)
	if err != nil {
		return fmt.Errorf("finishing operation %s of %s: %w", key, scope, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var done int64
	err = o.db.QueryRow(ctx, `SELECT done FROM operations WHERE scope = $1 AND key = $2`, scope, key).Scan(&done)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("operation %s of %s: %w", key, scope, store.ErrNotFound)
	case err != nil:
		return fmt.Errorf("reading operation %s of %s: %w", key, scope, err)
	}
	return fmt.Errorf("operation %s of %s is finished already: %w", key, scope, store.ErrConflict)
}

func (o operationStore) Abandon(ctx context.Context, scope, key string) error {
	if _, err := o.db.Exec(ctx, `UPDATE operations SET lease_until = 0 WHERE scope = $1 AND key = $2 AND done = 0`, scope, key); err != nil {
		return fmt.Errorf("abandoning operation %s of %s: %w", key, scope, err)
	}
	return nil
}

func (o operationStore) Prune(ctx context.Context, before time.Time) (int, error) {
	tag, err := o.db.Exec(ctx, `DELETE FROM operations WHERE started_at < $1`, before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("pruning operations: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

var _ store.OperationStore = operationStore{}
