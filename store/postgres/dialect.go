package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/legate-mcp/legate/store/sqlstore"
)

// The advisory locks of the store: one-key ones for the migrations and the
// audit log, two-key ones for approval bindings, apart from each other.
// Replicas of older and newer versions share a database while they roll
// over: the keys never change.
const (
	// migrationLock is held by a process while it migrates: replicas
	// starting together apply each migration once, in turn.
	migrationLock int64 = 0x6c65676174650001 // "legate", 1
	// auditLock is held by every audit append until it commits: an
	// identity column hands out ids in the order rows are inserted, and
	// the lock makes them visible in that order too.
	auditLock int64 = 0x6c65676174650002 // "legate", 2
	// openLock is the first key of the lock an approval Open holds on its
	// binding; the second is the binding's hash.
	openLock int32 = 0x6c670003 // "lg", 3
)

// newDialect is PostgreSQL's dialect: numbered placeholders, advisory
// locks where SQLite's write lock serialises writers, row locks, snapshot
// reads, and the approvals' notifications told by watch.
func newDialect(watch func(context.Context) <-chan string) *sqlstore.Dialect {
	return &sqlstore.Dialect{
		Numbered:    true,
		Duplicate:   duplicate,
		AuditLock:   fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d)`, auditLock),
		BindingLock: fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d, ?)`, openLock),
		ForUpdate:   ` FOR UPDATE`,
		Snapshot:    &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true},
		Watch:       watch,
	}
}

// duplicate reports whether err is PostgreSQL refusing a row because a
// unique key is taken (SQLSTATE 23505, unique_violation).
func duplicate(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
