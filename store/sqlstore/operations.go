package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/legate-mcp/legate/store"
)

// operationStore keeps idempotency records. Begin inserts the record if
// it is new (ON CONFLICT DO NOTHING: of racing inserts one wins) and
// otherwise reads it locked (the dialect's ForUpdate; on SQLite the
// transaction holds the database's write lock from BEGIN) before it
// decides: of racing callers, the second reads the row as the first left
// it.
type operationStore struct{ db database }

func (o operationStore) Begin(ctx context.Context, scope, key string, now time.Time, lease time.Duration) (store.Operation, error) {
	var op store.Operation
	err := o.db.tx(ctx, func(tx transaction) error {
		op = store.Operation{State: store.OpNew, Attempts: 1, Started: now, LeaseUntil: now.Add(lease)}
		res, err := tx.ExecContext(ctx, `INSERT INTO operations (scope, key, attempts, started_at, lease_until) VALUES (?, ?, 1, ?, ?)
			ON CONFLICT (scope, key) DO NOTHING`, scope, key, op.Started.UnixMilli(), op.LeaseUntil.UnixMilli())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		var started, until, done int64
		var outcome []byte
		if err := tx.QueryRowContext(ctx, `SELECT attempts, started_at, lease_until, done, outcome FROM operations WHERE scope = ? AND key = ?`+o.db.d.ForUpdate,
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
		_, err = tx.ExecContext(ctx, `UPDATE operations SET attempts = ?, lease_until = ? WHERE scope = ? AND key = ?`,
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

// Finish records the outcome with one conditional UPDATE; only when it
// changes nothing does it read why.
func (o operationStore) Finish(ctx context.Context, scope, key string, outcome []byte, _ time.Time) error {
	if outcome == nil {
		outcome = []byte{}
	}
	res, err := o.db.ExecContext(ctx, `UPDATE operations SET done = 1, outcome = ?, lease_until = 0 WHERE scope = ? AND key = ? AND done = 0`,
		outcome, scope, key)
	if err != nil {
		return fmt.Errorf("finishing operation %s of %s: %w", key, scope, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	var done int64
	err = o.db.QueryRowContext(ctx, `SELECT done FROM operations WHERE scope = ? AND key = ?`, scope, key).Scan(&done)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("operation %s of %s: %w", key, scope, store.ErrNotFound)
	case err != nil:
		return fmt.Errorf("reading operation %s of %s: %w", key, scope, err)
	}
	return fmt.Errorf("operation %s of %s is finished already: %w", key, scope, store.ErrConflict)
}

func (o operationStore) Abandon(ctx context.Context, scope, key string) error {
	if _, err := o.db.ExecContext(ctx, `UPDATE operations SET lease_until = 0 WHERE scope = ? AND key = ? AND done = 0`, scope, key); err != nil {
		return fmt.Errorf("abandoning operation %s of %s: %w", key, scope, err)
	}
	return nil
}

func (o operationStore) Prune(ctx context.Context, before time.Time) (int, error) {
	res, err := o.db.ExecContext(ctx, `DELETE FROM operations WHERE started_at < ?`, before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("pruning operations: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
