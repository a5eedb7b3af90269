package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/legate-mcp/legate/store"
)

// auditStore is the audit log, written by every replica at once.
type auditStore struct{ db *pgxpool.Pool }

// auditLock is the advisory lock every Append holds until it commits. An
// identity column hands out ids in the order rows are inserted, not in
// the order their transactions commit: without the lock a reader
// following the log by id (legate audit tail -f, AfterID) could read id 11
// before the transaction holding id 10 commits, and never see 10. With
// it, ids become visible in order. Batches are written a few times a
// second per replica, so the wait is short.
const auditLock int64 = 0x6c65676174650002 // "legate", 2

var auditCols = []string{"time", "principal", "tenant", "session", "tool", "source", "class", "decision", "rule",
	"approval_id", "outcome", "latency_us", "args_hash", "result_size", "detail"}

func (s auditStore) Append(ctx context.Context, rows []store.AuditRow) error {
	if len(rows) == 0 {
		return nil
	}
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, auditLock); err != nil {
			return err
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"audit"}, auditCols, pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
			r := rows[i]
			return []any{r.Time.UnixMicro(), r.Principal, r.Tenant, r.Session, r.Tool, r.Source, r.Class, r.Decision, r.Rule,
				r.ApprovalID, r.Outcome, r.Latency.Microseconds(), r.ArgsHash, int64(r.ResultSize), r.Detail}, nil
		}))
		return err
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
	rows, err := s.db.Query(ctx, `SELECT id, time, principal, tenant, session, tool, source, class, decision, rule,
		approval_id, outcome, latency_us, args_hash, result_size, detail FROM audit
		WHERE id > $1 AND time >= $2 AND ($3 = '' OR tool = $3) AND ($4 = '' OR principal = $4)
		ORDER BY id `+order+` LIMIT $5`, q.AfterID, since, q.Tool, q.Principal, limit)
	if err != nil {
		return nil, fmt.Errorf("reading audit: %w", err)
	}
	defer rows.Close()
	var out []store.AuditRow
	for rows.Next() {
		var r store.AuditRow
		var t, lat, size int64
		if err := rows.Scan(&r.ID, &t, &r.Principal, &r.Tenant, &r.Session, &r.Tool, &r.Source, &r.Class, &r.Decision, &r.Rule,
			&r.ApprovalID, &r.Outcome, &lat, &r.ArgsHash, &size, &r.Detail); err != nil {
			return nil, fmt.Errorf("reading audit: %w", err)
		}
		r.Time, r.Latency, r.ResultSize = time.UnixMicro(t).UTC(), time.Duration(lat)*time.Microsecond, int(size)
		out = append(out, r)
	}
	if order == "DESC" {
		slices.Reverse(out)
	}
	return out, rows.Err()
}

func (s auditStore) Prune(ctx context.Context, before time.Time) (int64, error) {
	tag, err := s.db.Exec(ctx, `DELETE FROM audit WHERE time < $1`, before.UnixMicro())
	if err != nil {
		return 0, fmt.Errorf("pruning audit: %w", err)
	}
	return tag.RowsAffected(), nil
}

var _ store.AuditStore = auditStore{}
