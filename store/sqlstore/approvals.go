package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/legate-mcp/legate/store"
)

// approvalStore keeps the inbox. Every transition is one UPDATE whose
// WHERE names the state it leaves: of many racing updates of one row
// (under SQLite's write lock, or PostgreSQL's row locks) exactly one finds
// it in that state.
type approvalStore struct{ db database }

const approvalCols = `id, principal, tenant, session, tool, class, args, args_hash, def_hash, definition, state,
	created_at, expires_at, decided_at, decider, reason, outcome, profile, credential_set`

func scanApproval(sc interface{ Scan(...any) error }) (*store.Approval, error) {
	a := &store.Approval{}
	var args, def, outcome string
	var created, expires, decided int64
	err := sc.Scan(&a.ID, &a.Principal, &a.Tenant, &a.Session, &a.Tool, &a.Class, &args, &a.ArgsHash, &a.DefHash, &def, &a.State,
		&created, &expires, &decided, &a.Decider, &a.Reason, &outcome, &a.Profile, &a.CredentialSet)
	if err != nil {
		return nil, err
	}
	a.Args, a.Definition = []byte(args), []byte(def)
	if outcome != "" {
		a.Outcome = []byte(outcome)
	}
	a.CreatedAt, a.ExpiresAt, a.DecidedAt = milliOr(created), milliOr(expires), milliOr(decided)
	return a, nil
}

func (s approvalStore) Create(ctx context.Context, a *store.Approval) error {
	return createApproval(ctx, s.db, a)
}

func createApproval(ctx context.Context, db execer, a *store.Approval) error {
	_, err := db.ExecContext(ctx, `INSERT INTO approvals (`+approvalCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, '', '', '', ?, ?)`,
		a.ID, a.Principal, a.Tenant, a.Session, a.Tool, a.Class, string(a.Args), a.ArgsHash, a.DefHash, string(a.Definition),
		store.StatePending, a.CreatedAt.UnixMilli(), a.ExpiresAt.UnixMilli(), a.Profile, a.CredentialSet)
	if db.duplicate(err) {
		return fmt.Errorf("approval %q: %w", a.ID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("storing approval request: %w", err)
	}
	a.State = store.StatePending
	return nil
}

// Open finds and creates in one transaction holding the binding's lock
// (Dialect.BindingLock; on SQLite the database's write lock, which the
// store's transactions take at BEGIN): the Opens of one binding, in every
// process, run one after another, and each sees the request the one
// before it committed.
func (s approvalStore) Open(ctx context.Context, a *store.Approval, since, now time.Time) (*store.Approval, bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, false, fmt.Errorf("opening approval request: %w", err)
	}
	defer tx.Rollback()
	b := store.Binding{Principal: a.Principal, Tenant: a.Tenant, Tool: a.Tool, ArgsHash: a.ArgsHash, DefHash: a.DefHash}
	// Two bindings sharing a hash only wait for each other.
	key := fnv.New32a()
	key.Write([]byte(strings.Join([]string{b.Principal, b.Tenant, b.Tool, b.ArgsHash, b.DefHash}, "\x00")))
	if err := tx.lock(ctx, s.db.d.BindingLock, int32(key.Sum32())); err != nil {
		return nil, false, fmt.Errorf("opening approval request: %w", err)
	}
	old, err := findApproval(ctx, tx, b, since)
	switch {
	case err == nil && old.Live(now):
		return old, false, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return nil, false, err
	}
	if err := createApproval(ctx, tx, a); err != nil {
		return nil, false, err
	}
	if err := tx.Commit(); err != nil {
		return nil, false, fmt.Errorf("storing approval request: %w", err)
	}
	return a, true, nil
}

func (s approvalStore) Get(ctx context.Context, id string) (*store.Approval, error) {
	a, err := scanApproval(s.db.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("approval %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading approval %q: %w", id, err)
	}
	return a, nil
}

func (s approvalStore) List(ctx context.Context, f store.ApprovalFilter) ([]*store.Approval, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	// Only the conditions the filter sets, each a plain comparison: a
	// condition such as (? = '' OR state = ?) keeps both databases from
	// the state index (PostgreSQL once its plan is generic), and every
	// listing would read every request ever stored.
	q, args := `SELECT `+approvalCols+` FROM approvals WHERE TRUE`, make([]any, 0, 3)
	if f.State != "" {
		q, args = q+` AND state = ?`, append(args, f.State)
	}
	if !f.AllTenants {
		q, args = q+` AND tenant = ?`, append(args, f.Tenant)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY created_at DESC, id LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("listing approvals: %w", err)
	}
	defer rows.Close()
	var out []*store.Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, fmt.Errorf("listing approvals: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func (s approvalStore) Find(ctx context.Context, b store.Binding, since time.Time) (*store.Approval, error) {
	return findApproval(ctx, s.db, b, since)
}

func findApproval(ctx context.Context, db querier, b store.Binding, since time.Time) (*store.Approval, error) {
	a, err := scanApproval(db.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals
		WHERE principal = ? AND tenant = ? AND tool = ? AND args_hash = ? AND def_hash = ? AND state != ? AND created_at > ?
		ORDER BY created_at DESC LIMIT 1`, b.Principal, b.Tenant, b.Tool, b.ArgsHash, b.DefHash, store.StateExpired, since.UnixMilli()))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("finding approval of %s: %w", b.Tool, err)
	}
	return a, nil
}

func (s approvalStore) Decide(ctx context.Context, id string, approve bool, decider, reason string, now time.Time) (*store.Approval, error) {
	state := store.StateDenied
	if approve {
		state = store.StateApproved
	}
	a, err := scanApproval(s.db.QueryRowContext(ctx, `UPDATE approvals SET state = ?, decider = ?, reason = ?, decided_at = ?
		WHERE id = ? AND state = ? AND expires_at > ? RETURNING `+approvalCols,
		state, decider, reason, now.UnixMilli(), id, store.StatePending, now.UnixMilli()))
	if err == nil {
		return a, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("deciding approval %q: %w", id, err)
	}
	a, err = s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if a.State == store.StatePending {
		return a, fmt.Errorf("approval %q expired at %s: %w", id, a.ExpiresAt.Format(time.RFC3339), store.ErrConflict)
	}
	return a, fmt.Errorf("approval %q is already %s: %w", id, a.State, store.ErrConflict)
}

func (s approvalStore) Claim(ctx context.Context, id string, now time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE approvals SET state = ?, heartbeat_at = ? WHERE id = ? AND state = ?`,
		store.StateExecuting, now.UnixMilli(), id, store.StateApproved)
	if err != nil {
		return false, fmt.Errorf("claiming approval %q: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

func (s approvalStore) Heartbeat(ctx context.Context, id string, now time.Time) error {
	res, err := s.db.ExecContext(ctx, `UPDATE approvals SET heartbeat_at = ? WHERE id = ? AND state = ?`, now.UnixMilli(), id, store.StateExecuting)
	if err != nil {
		return fmt.Errorf("recording heartbeat of approval %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return s.notExecuting(ctx, id)
	}
	return nil
}

func (s approvalStore) Finish(ctx context.Context, id, state string, outcome json.RawMessage) error {
	if state != store.StateExecuted && state != store.StateFailed {
		return fmt.Errorf("approval %q: a run ends executed or failed, not %s", id, state)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE approvals SET state = ?, outcome = ? WHERE id = ? AND state = ?`, state, string(outcome), id, store.StateExecuting)
	if err != nil {
		return fmt.Errorf("recording outcome of approval %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return s.notExecuting(ctx, id)
	}
	return nil
}

// notExecuting is the error of a change that needs the request executing
// and found it otherwise: finished already, or failed as interrupted.
func (s approvalStore) notExecuting(ctx context.Context, id string) error {
	a, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	return fmt.Errorf("approval %q is %s, not executing: %w", id, a.State, store.ErrConflict)
}

func (s approvalStore) Expire(ctx context.Context, now time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE approvals SET state = ? WHERE state = ? AND expires_at <= ?`, store.StateExpired, store.StatePending, now.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("expiring approvals: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

func (s approvalStore) FailInterrupted(ctx context.Context, staleBefore time.Time, outcome json.RawMessage) (int, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE approvals SET state = ?, outcome = ? WHERE state = ? AND heartbeat_at < ?`,
		store.StateFailed, string(outcome), store.StateExecuting, staleBefore.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("failing interrupted approvals: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

func (s approvalStore) CountPending(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM approvals WHERE state = ?`, store.StatePending).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting pending approvals: %w", err)
	}
	return n, nil
}
