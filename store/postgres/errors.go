package postgres

import (
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// duplicate reports whether err is PostgreSQL refusing a row because a
// unique key is taken (SQLSTATE 23505, unique_violation).
func duplicate(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// unixOr is the time of v seconds, zero for 0.
func unixOr(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.Unix(v, 0).UTC()
}

// milliOr is the time of v milliseconds, zero for 0.
func milliOr(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// jsonOr is b as stored JSON text, "{}" when empty.
func jsonOr(b []byte) string {
	if len(b) == 0 {
		return "{}"
	}
	return string(b)
}
