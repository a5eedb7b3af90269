// Package postgres is the store for more than one replica: every Legate
// process of a deployment opens the same PostgreSQL database, so that
// approvals decided on one are seen by all, each approved call runs once
// whichever replica claims it, and the audit log, vault, upstream caches
// and pins are shared.
//
// It runs on pgx v5: a connection pool (pgxpool) whose statements are
// prepared once per connection and cached (pgx's default query mode), and
// one dedicated connection per watcher listening for approval changes
// (LISTEN/NOTIFY, see Watch). Migrations are versioned, forward-only, and
// run once however many replicas start together: each replica takes an
// advisory lock before it looks at the schema version.
//
// The URL is a libpq connection URL,
// postgres://USER:PASSWORD@HOST:5432/DATABASE?sslmode=verify-full, with
// two schemes registered: postgres and postgresql. A search_path
// parameter keeps Legate's tables in a schema of their own, which must
// exist. Times are kept as integers in the units the embedded store keeps
// (seconds, milliseconds for approvals and operations, microseconds for
// audit rows), so a store copied from SQLite reads back equal.
package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/postgres/agentruns"
	"github.com/legate-mcp/legate/store/postgres/oauthstore"
)

// The URL schemes of this backend.
const (
	Scheme      = "postgres"
	SchemeLong  = "postgresql"
	notifyChan  = "legate_approvals" // see migration 1's trigger
	poolMaxConn = 16
)

func init() {
	store.Register(Scheme, openURL)
	store.Register(SchemeLong, openURL)
}

// openURL is the store.Opener of both schemes.
func openURL(ctx context.Context, url string) (store.Store, error) {
	st, err := Open(ctx, url)
	if err != nil {
		return nil, err // not a nil *Store in a non-nil interface
	}
	return st, nil
}

// Store is a store.Store on PostgreSQL.
type Store struct {
	pool *pgxpool.Pool
	// conn is the configuration a watcher's dedicated connection is made from.
	conn *pgx.ConnConfig
}

// Open connects to the database url names and applies pending
// migrations. A pool_max_conns parameter sizes the pool (default 16).
func Open(ctx context.Context, url string) (*Store, error) {
	st, err := Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, fmt.Errorf("postgres store: migrating: %w", err)
	}
	return st, nil
}

// Connect connects to the database url names without migrating it: for
// `legate store check`, which reports what Migrate would do.
func Connect(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", redact(err, url))
	}
	if !hasParam(url, "pool_max_conns") {
		cfg.MaxConns = poolMaxConn
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", redact(err, url))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres store: connecting to %s:%d/%s: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database, redact(err, url))
	}
	return &Store{pool: pool, conn: cfg.ConnConfig}, nil
}

// Pool is the store's connection pool, for tests and tools that need a
// raw statement.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Connectors returns the connector store.
func (s *Store) Connectors() store.ConnectorStore { return connectorStore{s.pool} }

// Upstreams returns the upstream store.
func (s *Store) Upstreams() store.UpstreamStore { return upstreamStore{s.pool} }

// Pins returns the pin store.
func (s *Store) Pins() store.PinStore { return pinStore{s.pool} }

// Approvals returns the approval inbox; it is a store.ApprovalWatcher.
func (s *Store) Approvals() store.ApprovalStore { return approvalStore{s.pool, s} }

// Audit returns the audit log.
func (s *Store) Audit() store.AuditStore { return auditStore{s.pool} }

// Secrets returns the vault's secret store.
func (s *Store) Secrets() store.SecretStore { return secretStore{s.pool} }

// Tokens returns the static token store.
func (s *Store) Tokens() store.TokenStore { return tokenStore{s.pool} }

// Operations returns the idempotency records of connector writes.
func (s *Store) Operations() store.OperationStore { return operationStore{s.pool} }

// Users returns the local accounts.
func (s *Store) Users() store.UserStore { return userStore{s.pool} }

// OAuth returns the authorization server's store.
func (s *Store) OAuth() store.OAuthStore { return oauthstore.Store{DB: s.pool} }

// AgentRuns returns the agent\'s history.
func (s *Store) AgentRuns() store.AgentRunStore { return agentruns.Store{DB: s.pool} }

// Close closes the pool; watchers end with their contexts.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

var _ store.Store = (*Store)(nil)
