// Package sqlite is the embedded default store: one SQLite database file
// in the state directory, pure Go (modernc.org/sqlite, no cgo), in WAL mode,
// migrated forward on open. It is SQLite's dialect of store/sqlstore,
// which holds the tables' statements.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/legate-mcp/legate/store/sqlstore"
)

// FileName is the database file's name in the state directory.
const FileName = "legate.db"

// Store is a store.Store on SQLite.
type Store struct {
	*sqlstore.Store
}

// dialect is SQLite's: ? placeholders, and no locks of its own, for every
// transaction the store begins is IMMEDIATE (the DSN's _txlock): it holds
// the database's write lock from its start, so writers run one after
// another, in every process.
var dialect = &sqlstore.Dialect{Duplicate: duplicate}

// Open opens (creating if needed) the database FileName in dir and
// applies pending migrations.
func Open(ctx context.Context, dir string) (*Store, error) {
	return OpenFile(ctx, filepath.Join(dir, FileName))
}

// OpenFile opens (creating if needed, with its directory) the database at
// path and applies pending migrations.
func OpenFile(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating state dir: %w", err)
	}
	return open(ctx, "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate", path)
}

var memoryDBs atomic.Int64

// OpenMemory opens a private in-memory store, gone when closed: for
// commands that must not create a state directory, and for tests.
func OpenMemory(ctx context.Context) (*Store, error) {
	name := fmt.Sprintf("legate-mem-%d-%d", os.Getpid(), memoryDBs.Add(1))
	return open(ctx, "file:"+name+"?mode=memory&cache=shared&_pragma=busy_timeout(10000)&_txlock=immediate", "memory")
}

func open(ctx context.Context, dsn, what string) (*Store, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", what, err)
	}
	if err := migrateWhenFree(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrating %s: %w", what, err)
	}
	return &Store{sqlstore.New(db, dialect)}, nil
}

// openWait bounds how long an open waits for other processes opening
// the same file: as long as a statement waits for a lock (busy_timeout).
const openWait = 10 * time.Second

// migrateWhenFree migrates, trying again while the file is busy: SQLite
// does not wait on its own for a connection's first pragmas (WAL) while
// another process sets the same file up. Migrations are transactional,
// so a try that failed left nothing half done.
func migrateWhenFree(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(openWait)
	for pause := time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		err := sqlstore.Migrate(ctx, db, dialect, createMigrations, migrations)
		if err == nil || !busy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}

// SchemaVersion returns the applied schema version.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.DB().QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}
