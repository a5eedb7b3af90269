package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/legate-mcp/legate/store"
)

// approvalStore keeps the inbox. Every transition is one UPDATE whose
// WHERE names the state it leaves: under PostgreSQL's row locks, of many
// racing updates of one row exactly one finds it in that state.
type approvalStore struct {
	db *pgxpool.Pool
	st *Store // for Watch
}

const approvalCols = `id, principal, tenant, session, tool, class, args, args_hash, def_hash, definition, state,
	created_at, expires_at, decided_at, decider, reason, outcome`

func scanApproval(row pgx.Row) (*store.Approval, error) {
	a := &store.Approval{}
	var args, def, outcome string
	var created, expires, decided int64
	err := row.Scan(&a.ID, &a.Principal, &a.Tenant, &a.Session, &a.Tool, &a.Class, &args, &a.ArgsHash, &a.DefHash, &def, &a.State,
		&created, &expires, &decided, &a.Decider, &a.Reason, &outcome)
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

// querier is the pool or a transaction.
type querier interface {
	execer
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func createApproval(ctx context.Context, db execer, a *store.Approval) error {
	_, err := db.Exec(ctx, `INSERT INTO approvals (`+approvalCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 0, '', '', '')`,
		a.ID, a.Principal, a.Tenant, a.Session, a.Tool, a.Class, string(a.Args), a.ArgsHash, a.DefHash, string(a.Definition),
		store.StatePending, a.CreatedAt.UnixMilli(), a.ExpiresAt.UnixMilli())
	if duplicate(err) {
		return fmt.Errorf("approval %q: %w", a.ID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("storing approval request: %w", err)
	}
	a.State = store.StatePending
	return nil
}

// openLock is the first key of the advisory locks Open takes, one for
// each binding (the second key is its FNV-1a hash; two bindings sharing
// one only wait for each other); the two-key locks are apart from the
// one-key ones of migrations and audit.
const openLock int32 = 0x6c670003 // "lg", 3

// Open finds and creates in one transaction holding the binding's
// advisory lock: the Opens of one binding, in every replica, run one after
// another, and each sees the request the one before it committed.
func (s approvalStore) Open(ctx context.Context, a *store.Approval, since, now time.Time) (req *store.Approval, created bool, err error) {
	b := store.Binding{Principal: a.Principal, Tenant: a.Tenant, Tool: a.Tool, ArgsHash: a.ArgsHash, DefHash: a.DefHash}
	err = pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		key := fnv.New32a()
		key.Write([]byte(strings.Join([]string{b.Principal, b.Tenant, b.Tool, b.ArgsHash, b.DefHash}, "\x00")))
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, openLock, int32(key.Sum32())); err != nil {
			return fmt.Errorf("opening approval request: %w", err)
		}
		old, err := findApproval(ctx, tx, b, since)
		switch {
		case err == nil && old.Live(now):
			req = old
			return nil
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return err
		}
		req, created = a, true
		return createApproval(ctx, tx, a)
	})
	if err != nil {
		return nil, false, err
	}
	return req, created, nil
}

func (s approvalStore) Get(ctx context.Context, id string) (*store.Approval, error) {
	a, err := scanApproval(s.db.QueryRow(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
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
	rows, err := s.db.Query(ctx, `SELECT `+approvalCols+` FROM approvals
		WHERE ($1 = '' OR state = $1) AND ($2 OR tenant = $3) ORDER BY created_at DESC, id LIMIT $4`,
		f.State, f.AllTenants, f.Tenant, limit)
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
	a, err := scanApproval(db.QueryRow(ctx, `SELECT `+approvalCols+` FROM approvals
		WHERE principal = $1 AND tenant = $2 AND tool = $3 AND args_hash = $4 AND def_hash = $5 AND state <> $6 AND created_at > $7
		ORDER BY created_at DESC LIMIT 1`, b.Principal, b.Tenant, b.Tool, b.ArgsHash, b.DefHash, store.StateExpired, since.UnixMilli()))
	if errors.Is(err, pgx.ErrNoRows) {
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
	a, err := scanApproval(s.db.QueryRow(ctx, `UPDATE approvals SET state = $1, decider = $2, reason = $3, decided_at = $4
		WHERE id = $5 AND state = $6 AND expires_at > $4 RETURNING `+approvalCols,
		state, decider, reason, now.UnixMilli(), id, store.StatePending))
	if err == nil {
		return a, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
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
	tag, err := s.db.Exec(ctx, `UPDATE approvals SET state = $1, heartbeat_at = $2 WHERE id = $3 AND state = $4`,
		store.StateExecuting, now.UnixMilli(), id, store.StateApproved)
	if err != nil {
		return false, fmt.Errorf("claiming approval %q: %w", id, err)
	}
	return tag.RowsAffected() == 1, nil
}

func (s approvalStore) Heartbeat(ctx context.Context, id string, now time.Time) error {
	tag, err := s.db.Exec(ctx, `UPDATE approvals SET heartbeat_at = $1 WHERE id = $2 AND state = $3`, now.UnixMilli(), id, store.StateExecuting)
	if err != nil {
		return fmt.Errorf("recording heartbeat of approval %q: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return s.notExecuting(ctx, id)
	}
	return nil
}

func (s approvalStore) Finish(ctx context.Context, id, state string, outcome json.RawMessage) error {
	if state != store.StateExecuted && state != store.StateFailed {
		return fmt.Errorf("approval %q: a run ends executed or failed, not %s", id, state)
	}
	tag, err := s.db.Exec(ctx, `UPDATE approvals SET state = $1, outcome = $2 WHERE id = $3 AND state = $4`, state, string(outcome), id, store.StateExecuting)
	if err != nil {
		return fmt.Errorf("recording outcome of approval %q: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
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
	tag, err := s.db.Exec(ctx, `UPDATE approvals SET state = $1 WHERE state = $2 AND expires_at <= $3`, store.StateExpired, store.StatePending, now.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("expiring approvals: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

func (s approvalStore) FailInterrupted(ctx context.Context, staleBefore time.Time, outcome json.RawMessage) (int, error) {
	tag, err := s.db.Exec(ctx, `UPDATE approvals SET state = $1, outcome = $2 WHERE state = $3 AND heartbeat_at < $4`,
		store.StateFailed, string(outcome), store.StateExecuting, staleBefore.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("failing interrupted approvals: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

func (s approvalStore) CountPending(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRow(ctx, `SELECT COUNT(*) FROM approvals WHERE state = $1`, store.StatePending).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting pending approvals: %w", err)
	}
	return n, nil
}

// Watch tells of every approval whose state changes, in any process on
// the database (see Store.Watch).
func (s approvalStore) Watch(ctx context.Context) <-chan string { return s.st.Watch(ctx) }

var (
	_ store.ApprovalStore   = approvalStore{}
	_ store.ApprovalWatcher = approvalStore{}
)
