package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/legate-mcp/legate/store"
)

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

var _ store.AuditStore = auditStore{}
