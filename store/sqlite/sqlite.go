// Package sqlite is the embedded default store: one SQLite database file
// in the state directory, pure Go (modernc.org/sqlite, no cgo), in WAL mode,
// migrated forward on open.
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

	"github.com/legate-mcp/legate/store"
)

// FileName is the database file's name in the state directory.
const FileName = "legate.db"

// Store is a store.Store on SQLite.
type Store struct {
	db *sql.DB
}

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
	s := &Store{db: db}
	if err := s.migrateWhenFree(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrating %s: %w", what, err)
	}
	return s, nil
}

// openWait bounds how long an open waits for other processes opening
// the same file: as long as a statement waits for a lock (busy_timeout).
const openWait = 10 * time.Second

// migrateWhenFree migrates, trying again while the file is busy: SQLite
// does not wait on its own for a connection's first pragmas (WAL) while
// another process sets the same file up. Migrations are transactional,
// so a try that failed left nothing half done.
func (s *Store) migrateWhenFree(ctx context.Context) error {
	deadline := time.Now().Add(openWait)
	for pause := time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		err := s.migrate(ctx)
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

// Connectors returns the connector store.
func (s *Store) Connectors() store.ConnectorStore { return connectorStore{s.db} }

// Upstreams returns the upstream store.
func (s *Store) Upstreams() store.UpstreamStore { return upstreamStore{s.db} }

// Pins returns the pin store.
func (s *Store) Pins() store.PinStore { return pinStore{s.db} }

// Approvals returns the approval inbox.
func (s *Store) Approvals() store.ApprovalStore { return approvalStore{s.db} }

// Audit returns the audit log.
func (s *Store) Audit() store.AuditStore { return auditStore{s.db} }

// Secrets returns the vault's secret store.
func (s *Store) Secrets() store.SecretStore { return secretStore{s.db} }

// Tokens returns the static token store.
func (s *Store) Tokens() store.TokenStore { return tokenStore{s.db} }

// Operations returns the idempotency records of connector writes.
func (s *Store) Operations() store.OperationStore { return operationStore{s.db} }

// Users returns the local accounts.
func (s *Store) Users() store.UserStore { return userStore{s.db} }

// OAuth returns the authorization server's store.
func (s *Store) OAuth() store.OAuthStore { return oauthStore{s.db} }

// AgentRuns returns the agent\'s history.
func (s *Store) AgentRuns() store.AgentRunStore { return agentRunStore{s.db} }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

var _ store.Store = (*Store)(nil)
