// Package sqlquotas is the store of the budgets' counts
// (store.QuotaStore) over database/sql, for package sqlstore, which hands
// it its database and its dialect's placeholders.
package sqlquotas

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/legate-mcp/legate/store"
)

// quotaStore counts the budgets' use per window; window starts in
// milliseconds.
type quotaStore struct {
	db     *sql.DB
	rebind func(query string) string
}

// New is the quota store on db, whose statements rebind writes in the
// backend's placeholders (they are written with ?).
func New(db *sql.DB, rebind func(string) string) store.QuotaStore { return quotaStore{db, rebind} }

func (s quotaStore) Take(ctx context.Context, key string, start time.Time, n, limit int64) (int64, bool, error) {
	if n != 0 && n <= limit {
		// One statement: the row is made or added to only while the sum
		// stays within limit (used <= limit-n, so that nothing overflows).
		room := limit - n
		if n < 0 && room < limit {
			room = math.MaxInt64
		}
		var used int64
		err := s.db.QueryRowContext(ctx, s.rebind(`INSERT INTO quota_counts (budget, window_start, used) VALUES (?, ?, ?)
			ON CONFLICT (budget, window_start) DO UPDATE SET used = quota_counts.used + excluded.used
			WHERE quota_counts.used <= ? RETURNING used`), key, start.UnixMilli(), n, room).Scan(&used)
		if err == nil {
			return used, true, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, false, fmt.Errorf("counting budget %s: %w", key, err)
		}
	}
	// Nothing to take (a check, read without a write), or more than the
	// limit at once: the count as it stands.
	var used int64
	err := s.db.QueryRowContext(ctx, s.rebind(`SELECT used FROM quota_counts WHERE budget = ? AND window_start = ?`), key, start.UnixMilli()).Scan(&used)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, false, fmt.Errorf("reading budget %s: %w", key, err)
	}
	return used, n == 0 && used <= limit, nil
}

func (s quotaStore) Counts(ctx context.Context, since time.Time) ([]store.QuotaCount, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT budget, window_start, used FROM quota_counts WHERE window_start >= ? ORDER BY budget, window_start`), since.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("listing budget counts: %w", err)
	}
	defer rows.Close()
	var out []store.QuotaCount
	for rows.Next() {
		var c store.QuotaCount
		var start int64
		if err := rows.Scan(&c.Key, &start, &c.Count); err != nil {
			return nil, fmt.Errorf("listing budget counts: %w", err)
		}
		c.Start = time.UnixMilli(start).UTC()
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing budget counts: %w", err)
	}
	return out, nil
}

func (s quotaStore) Prune(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.rebind(`DELETE FROM quota_counts WHERE window_start < ?`), before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("pruning budget counts: %w", err)
	}
	return res.RowsAffected()
}

var _ store.QuotaStore = quotaStore{}
