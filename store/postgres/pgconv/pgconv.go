// Package pgconv holds what the PostgreSQL store's packages share to read and
// write rows: unique-key refusals, and the stored forms of times and JSON.
package pgconv

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Duplicate reports whether err is PostgreSQL refusing a row because a
// unique key is taken (SQLSTATE 23505, unique_violation).
func Duplicate(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// UnixOr is the time of v seconds, zero for 0.
func UnixOr(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.Unix(v, 0).UTC()
}

// MilliOr is the time of v milliseconds, zero for 0.
func MilliOr(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// JSONOr is b as stored JSON text, "{}" when empty.
func JSONOr(b []byte) string {
	if len(b) == 0 {
		return "{}"
	}
	return string(b)
}

// Execer is the pool or a transaction.
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}
