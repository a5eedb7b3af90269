// Package sqlite is the embedded default store: one SQLite database file
// in the state directory, pure Go (modernc.org/sqlite, no cgo), in WAL mode,
// migrated forward on open.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// Open opens (creating if needed) the database in dir and applies pending
// migrations.
func Open(ctx context.Context, dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating state dir: %w", err)
	}
	path := filepath.Join(dir, FileName)
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
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrating %s: %w", what, err)
	}
	return s, nil
}

// migrations are applied in order, once each; never edit a released one,
// append a new one.
var migrations = []string{
	// 1: connector instances added through the CLI or API.
	`CREATE TABLE connectors (
		id          TEXT PRIMARY KEY,
		type        TEXT NOT NULL,
		config      TEXT NOT NULL DEFAULT '{}',
		credentials TEXT NOT NULL DEFAULT '{}',
		created_at  INTEGER NOT NULL
	)`,
	// 2: upstream MCP servers and their cached tools.
	`CREATE TABLE upstreams (
		id         TEXT PRIMARY KEY,
		definition TEXT NOT NULL,
		created_at INTEGER NOT NULL
	);
	CREATE TABLE upstream_status (
		id           TEXT PRIMARY KEY,
		refreshed_at INTEGER NOT NULL DEFAULT 0,
		checked_at   INTEGER NOT NULL DEFAULT 0,
		last_error   TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE upstream_tools (
		upstream_id TEXT NOT NULL,
		name        TEXT NOT NULL,
		definition  TEXT NOT NULL,
		hash        TEXT NOT NULL,
		PRIMARY KEY (upstream_id, name)
	);
	CREATE TABLE cache_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
	INSERT INTO cache_version VALUES (1, 0);`,
	// 3: the resource URIs each upstream offers, to report URIs two claim.
	`ALTER TABLE upstream_status ADD COLUMN resources TEXT NOT NULL DEFAULT '[]'`,
	// 4: pins, the approval inbox and the audit log.
	`CREATE TABLE pins (
		upstream_id TEXT NOT NULL,
		tool        TEXT NOT NULL,
		hash        TEXT NOT NULL,
		definition  TEXT NOT NULL,
		accepted_at INTEGER NOT NULL,
		accepted_by TEXT NOT NULL,
		PRIMARY KEY (upstream_id, tool)
	);
	CREATE TABLE approvals (
		id          TEXT PRIMARY KEY,
		principal   TEXT NOT NULL,
		tenant      TEXT NOT NULL,
		session     TEXT NOT NULL,
		tool        TEXT NOT NULL,
		class       TEXT NOT NULL,
		args        TEXT NOT NULL,
		args_hash   TEXT NOT NULL,
		def_hash    TEXT NOT NULL,
		definition  TEXT NOT NULL,
		state       TEXT NOT NULL,
		created_at  INTEGER NOT NULL,
		expires_at  INTEGER NOT NULL,
		decided_at  INTEGER NOT NULL DEFAULT 0,
		decider     TEXT NOT NULL DEFAULT '',
		reason      TEXT NOT NULL DEFAULT '',
		outcome     TEXT NOT NULL DEFAULT '',
		heartbeat_at INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX approvals_binding ON approvals (principal, tenant, tool, args_hash, def_hash, created_at);
	CREATE INDEX approvals_state ON approvals (state, created_at);
	CREATE TABLE audit (
		id          INTEGER PRIMARY KEY AUTOINCREMENT,
		time        INTEGER NOT NULL,
		principal   TEXT NOT NULL,
		tenant      TEXT NOT NULL,
		session     TEXT NOT NULL,
		tool        TEXT NOT NULL,
		source      TEXT NOT NULL,
		class       TEXT NOT NULL,
		decision    TEXT NOT NULL,
		rule        TEXT NOT NULL,
		approval_id TEXT NOT NULL,
		outcome     TEXT NOT NULL,
		latency_us  INTEGER NOT NULL,
		args_hash   TEXT NOT NULL,
		result_size INTEGER NOT NULL,
		detail      TEXT NOT NULL
	);
	CREATE INDEX audit_time ON audit (time);
	CREATE INDEX audit_tool ON audit (tool, time);`,
	// 5: vault secrets, one row per version: ciphertext and wrapped data key.
	`CREATE TABLE secrets (
		tenant      TEXT NOT NULL,
		name        TEXT NOT NULL,
		version     INTEGER NOT NULL,
		key_id      TEXT NOT NULL,
		wrapped_key BLOB NOT NULL,
		ciphertext  BLOB NOT NULL,
		created_at  INTEGER NOT NULL,
		PRIMARY KEY (tenant, name, version)
	);
	CREATE INDEX secrets_key ON secrets (key_id);`,
	// 6: static bearer tokens, by the SHA-256 of the token (never the token).
	`CREATE TABLE tokens (
		name       TEXT PRIMARY KEY,
		hash       TEXT NOT NULL UNIQUE,
		tenant     TEXT NOT NULL,
		role       TEXT NOT NULL,
		profile    TEXT NOT NULL,
		created_at INTEGER NOT NULL,
		revoked_at INTEGER NOT NULL DEFAULT 0
	)`,
}

func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return err
	}
	var current int
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return err
	}
	if current > len(migrations) {
		return fmt.Errorf("database schema version %d is newer than this binary knows (%d): upgrade legate", current, len(migrations))
	}
	for v := current + 1; v <= len(migrations); v++ {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, migrations[v-1]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", v, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, v, time.Now().Unix()); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", v, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d: %w", v, err)
		}
	}
	return nil
}

// SchemaVersion returns the applied schema version.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
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

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

type connectorStore struct{ db *sql.DB }

func (c connectorStore) List(ctx context.Context) ([]store.Connector, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT id, type, config, credentials, created_at FROM connectors ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("listing connectors: %w", err)
	}
	defer rows.Close()
	var out []store.Connector
	for rows.Next() {
		var r store.Connector
		var cfg, creds string
		var created int64
		if err := rows.Scan(&r.ID, &r.Type, &cfg, &creds, &created); err != nil {
			return nil, fmt.Errorf("listing connectors: %w", err)
		}
		r.Config, r.Credentials, r.CreatedAt = []byte(cfg), []byte(creds), time.Unix(created, 0).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

func (c connectorStore) Get(ctx context.Context, id string) (store.Connector, error) {
	r := store.Connector{ID: id}
	var cfg, creds string
	var created int64
	err := c.db.QueryRowContext(ctx, `SELECT type, config, credentials, created_at FROM connectors WHERE id = ?`, id).Scan(&r.Type, &cfg, &creds, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("connector %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("reading connector %q: %w", id, err)
	}
	r.Config, r.Credentials, r.CreatedAt = []byte(cfg), []byte(creds), time.Unix(created, 0).UTC()
	return r, nil
}

func (c connectorStore) Create(ctx context.Context, r store.Connector) error {
	if r.CreatedAt.IsZero() {
		r.CreatedAt = time.Now()
	}
	_, err := c.db.ExecContext(ctx, `INSERT INTO connectors (id, type, config, credentials, created_at) VALUES (?, ?, ?, ?, ?)`,
		r.ID, r.Type, orEmpty(r.Config), orEmpty(r.Credentials), r.CreatedAt.Unix())
	if err != nil && strings.Contains(err.Error(), "UNIQUE constraint") {
		return fmt.Errorf("connector %q: %w", r.ID, store.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("storing connector %q: %w", r.ID, err)
	}
	return nil
}

func (c connectorStore) Delete(ctx context.Context, id string) error {
	res, err := c.db.ExecContext(ctx, `DELETE FROM connectors WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("removing connector %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("connector %q: %w", id, store.ErrNotFound)
	}
	return nil
}

func orEmpty(b []byte) string {
	if len(b) == 0 {
		return "{}"
	}
	return string(b)
}

var _ store.Store = (*Store)(nil)
