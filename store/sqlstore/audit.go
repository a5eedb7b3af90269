package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/legate-mcp/legate/store"
)

// auditStore is the audit log, written by every process on the database
// at once.
type auditStore struct{ db database }

// auditCols are the columns an Append writes.
const auditCols = 16

// Append writes the rows in one transaction holding the dialect's audit
// lock (on SQLite, the database's write lock, taken at BEGIN). Ids are
// handed out in the order rows are inserted, not in the order their
// transactions commit: without the lock a reader following the log by
// id (legate audit tail -f, AfterID) could read id 11 before the
// transaction holding id 10 commits, and never see 10. With it, ids
// become visible in order. Batches are written a few times a second per
// process, so the wait is short.
func (s auditStore) Append(ctx context.Context, rows []store.AuditRow) error {
	if len(rows) == 0 {
		return nil
	}
	err := s.db.tx(ctx, func(tx transaction) error {
		if err := tx.lock(ctx, s.db.d.AuditLock); err != nil {
			return err
		}
		return insertRows(ctx, tx, `INSERT INTO audit (time, principal, tenant, session, tool, source, class, decision, rule,
			approval_id, outcome, latency_us, args_hash, result_size, detail, profile)`, auditCols, len(rows), func(args []any, i int) []any {
			r := rows[i]
			return append(args, r.Time.UnixMicro(), r.Principal, r.Tenant, r.Session, r.Tool, r.Source, r.Class, r.Decision, r.Rule,
				r.ApprovalID, r.Outcome, r.Latency.Microseconds(), r.ArgsHash, r.ResultSize, r.Detail, r.Profile)
		})
	})
	if err != nil {
		return fmt.Errorf("writing audit rows: %w", err)
	}
	return nil
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
		approval_id, outcome, latency_us, args_hash, result_size, detail, profile FROM audit
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
			&r.ApprovalID, &r.Outcome, &lat, &r.ArgsHash, &r.ResultSize, &r.Detail, &r.Profile); err != nil {
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
