package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/legate-mcp/legate/store"
)

type pinStore struct{ db *sql.DB }

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
	return upstreamStore(p).tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, q, upstream, tool, pin.Hash, string(pin.Definition), pin.AcceptedAt.Unix(), pin.AcceptedBy); err != nil {
			return fmt.Errorf("pinning %s of %s: %w", tool, upstream, err)
		}
		if ifAbsent {
			return nil // a first pin changes nothing a server shows
		}
		return bumpVersion(ctx, tx) // a server picks up the acceptance
	})
}

type approvalStore struct{ db *sql.DB }

const approvalCols = `id, principal, tenant, session, tool, class, args, args_hash, def_hash, definition, state,
	created_at, expires_at, decided_at, decider, reason, outcome`

func scanApproval(sc interface{ Scan(...any) error }) (*store.Approval, error) {
	a := &store.Approval{}
	var args, def, outcome string
	var created, expires, decided int64
	err := sc.Scan(&a.ID, &a.Principal, &a.Tenant, &a.Session, &a.Tool, &a.Class, &args, &a.ArgsHash, &a.DefHash, &def, &a.State,
		&created, &expires, &decided, &a.Decider, &a.Reason, &outcome)
	if err != nil {
		return nil, err
	}
	a.Args, a.Definition = []byte(args), []byte(def)
	if outcome != "" {
		a.Outcome = []byte(outcome)
	}
	a.CreatedAt, a.ExpiresAt, a.DecidedAt = unixMilli(created), unixMilli(expires), unixMilli(decided)
	return a, nil
}

func unixMilli(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

func (s approvalStore) Create(ctx context.Context, a *store.Approval) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO approvals (`+approvalCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, '', '', '')`,
		a.ID, a.Principal, a.Tenant, a.Session, a.Tool, a.Class, string(a.Args), a.ArgsHash, a.DefHash, string(a.Definition),
		store.StatePending, a.CreatedAt.UnixMilli(), a.ExpiresAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("storing approval request: %w", err)
	}
	a.State = store.StatePending
	return nil
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
	rows, err := s.db.QueryContext(ctx, `SELECT `+approvalCols+` FROM approvals
		WHERE (? = '' OR state = ?) AND (? OR tenant = ?) ORDER BY created_at DESC, id LIMIT ?`,
		f.State, f.State, f.AllTenants, f.Tenant, limit)
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
	a, err := scanApproval(s.db.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals
		WHERE principal = ? AND tenant = ? AND tool = ? AND args_hash = ? AND def_hash = ? AND state != ? AND created_at > ?
		ORDER BY created_at DESC LIMIT 1`, b.Principal, b.Tenant, b.Tool, b.ArgsHash, b.DefHash, store.StateExpired, since.UnixMilli()))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	return a, err
}

func (s approvalStore) Decide(ctx context.Context, id string, approve bool, decider, reason string, now time.Time) (*store.Approval, error) {
	state := store.StateDenied
	if approve {
		state = store.StateApproved
	}
	res, err := s.db.ExecContext(ctx, `UPDATE approvals SET state = ?, decider = ?, reason = ?, decided_at = ?
		WHERE id = ? AND state = ? AND expires_at > ?`, state, decider, reason, now.UnixMilli(), id, store.StatePending, now.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("deciding approval %q: %w", id, err)
	}
	a, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if a.State == store.StatePending {
			return a, fmt.Errorf("approval %q expired at %s: %w", id, a.ExpiresAt.Format(time.RFC3339), store.ErrConflict)
		}
		return a, fmt.Errorf("approval %q is already %s: %w", id, a.State, store.ErrConflict)
	}
	return a, nil
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
	_, err := s.db.ExecContext(ctx, `UPDATE approvals SET heartbeat_at = ? WHERE id = ? AND state = ?`, now.UnixMilli(), id, store.StateExecuting)
	return err
}

func (s approvalStore) Finish(ctx context.Context, id, state string, outcome json.RawMessage) error {
	_, err := s.db.ExecContext(ctx, `UPDATE approvals SET state = ?, outcome = ? WHERE id = ? AND state = ?`, state, string(outcome), id, store.StateExecuting)
	if err != nil {
		return fmt.Errorf("recording outcome of approval %q: %w", id, err)
	}
	return nil
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
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM approvals WHERE state = ?`, store.StatePending).Scan(&n)
	return n, err
}

type auditStore struct{ db *sql.DB }

// auditChunk is the number of audit rows written by one INSERT: a
// statement per row costs more than the row itself.
const auditChunk = 64

func (s auditStore) Append(ctx context.Context, rows []store.AuditRow) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	args := make([]any, 0, 15*min(len(rows), auditChunk))
	for len(rows) > 0 {
		n := min(len(rows), auditChunk)
		args = args[:0]
		for _, r := range rows[:n] {
			args = append(args, r.Time.UnixMicro(), r.Principal, r.Tenant, r.Session, r.Tool, r.Source, r.Class, r.Decision, r.Rule,
				r.ApprovalID, r.Outcome, r.Latency.Microseconds(), r.ArgsHash, r.ResultSize, r.Detail)
		}
		q := `INSERT INTO audit (time, principal, tenant, session, tool, source, class, decision, rule,
			approval_id, outcome, latency_us, args_hash, result_size, detail) VALUES ` +
			strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), ", n-1) + "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			tx.Rollback()
			return fmt.Errorf("writing audit rows: %w", err)
		}
		rows = rows[n:]
	}
	return tx.Commit()
}

func (s auditStore) Query(ctx context.Context, q store.AuditQuery) ([]store.AuditRow, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 1000
	}
	order := "ASC"
	if q.AfterID == 0 && q.Limit > 0 {
		order = "DESC" // the newest rows, returned oldest first below
	}
	var since int64
	if !q.Since.IsZero() {
		since = q.Since.UnixMicro()
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, time, principal, tenant, session, tool, source, class, decision, rule,
		approval_id, outcome, latency_us, args_hash, result_size, detail FROM audit
		WHERE id > ? AND time >= ? AND (? = '' OR tool = ?) AND (? = '' OR principal = ?)
		ORDER BY id `+order+` LIMIT ?`, q.AfterID, since, q.Tool, q.Tool, q.Principal, q.Principal, limit)
	if err != nil {
		return nil, fmt.Errorf("reading audit: %w", err)
	}
	defer rows.Close()
	var out []store.AuditRow
	for rows.Next() {
		var r store.AuditRow
		var t, lat int64
		if err := rows.Scan(&r.ID, &t, &r.Principal, &r.Tenant, &r.Session, &r.Tool, &r.Source, &r.Class, &r.Decision, &r.Rule,
			&r.ApprovalID, &r.Outcome, &lat, &r.ArgsHash, &r.ResultSize, &r.Detail); err != nil {
			return nil, fmt.Errorf("reading audit: %w", err)
		}
		r.Time, r.Latency = time.UnixMicro(t).UTC(), time.Duration(lat)*time.Microsecond
		out = append(out, r)
	}
	if order == "DESC" {
		slices.Reverse(out)
	}
	return out, rows.Err()
}

func (s auditStore) Prune(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM audit WHERE time < ?`, before.UnixMicro())
	if err != nil {
		return 0, fmt.Errorf("pruning audit: %w", err)
	}
	return res.RowsAffected()
}
