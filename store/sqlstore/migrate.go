package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Beginner is a database, or one connection of it, that migrations run
// on.
type Beginner interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Migrate applies a backend's pending migrations, in order, each in a
// transaction with the schema_migrations row that records it; table is
// the backend's statement creating schema_migrations if it is missing.
// Each migration reads the version inside its own transaction: processes
// migrating one database at once, one after another (under SQLite's write
// lock, taken at BEGIN, or PostgreSQL's migration lock), apply each
// migration once. A database newer than list is refused: an older binary
// must not write to a schema it does not know.
func Migrate(ctx context.Context, db Beginner, d *Dialect, table string, list []string) error {
	if _, err := db.ExecContext(ctx, table); err != nil {
		return err
	}
	for {
		done, err := migrateOne(ctx, db, d, list)
		if err != nil || done {
			return err
		}
	}
}

// migrateOne applies the next pending migration; done is true when none is.
func migrateOne(ctx context.Context, db Beginner, d *Dialect, list []string) (done bool, err error) {
	sqltx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	tx := transaction{sqltx, database{d: d}}
	defer tx.Rollback()
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return false, err
	}
	switch {
	case current > len(list):
		return false, fmt.Errorf("database schema version %d is newer than this binary knows (%d): upgrade legate", current, len(list))
	case current == len(list):
		return true, nil
	}
	v := current + 1
	if _, err := sqltx.ExecContext(ctx, list[v-1]); err != nil { // as written, not rebound
		return false, fmt.Errorf("migration %d: %w", v, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, v, time.Now().Unix()); err != nil {
		return false, fmt.Errorf("migration %d: %w", v, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migration %d: %w", v, err)
	}
	return false, nil
}
