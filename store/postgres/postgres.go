// Package postgres is the store for more than one replica: every Legate
// process of a deployment opens the same PostgreSQL database, so that
// approvals decided on one are seen by all, each approved call runs once
// whichever replica claims it, and the audit log, vault, upstream caches
// and pins are shared.
//
// It is the store of package sqlstore on database/sql through pgx v5's
// driver (pgx/v5/stdlib), whose statements are prepared once per
// connection and cached (pgx's default query mode). This package holds
// PostgreSQL's dialect (advisory locks, see dialect.go), its schema, and
// one dedicated pgx connection per watcher listening for approval changes
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
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlstore"
)

// The URL schemes of this backend.
const (
	Scheme      = "postgres"
	SchemeLong  = "postgresql"
	notifyChan  = "legate_approvals" // see migration 1's trigger
	eventsChan  = "legate_events"    // see the events table's trigger
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
	*sqlstore.Store
	dialect *sqlstore.Dialect
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
// `legate store check`, which reports what Migrate would do. The URL's
// pool parameters (pgxpool's: pool_max_conns, pool_max_conn_lifetime,
// pool_max_conn_idle_time) size database/sql's pool.
func Connect(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", redact(err, url))
	}
	if !hasParam(url, "pool_max_conns") {
		cfg.MaxConns = poolMaxConn
	}
	db := stdlib.OpenDB(*cfg.ConnConfig)
	db.SetMaxOpenConns(int(cfg.MaxConns))
	db.SetMaxIdleConns(int(cfg.MaxConns))
	db.SetConnMaxLifetime(cfg.MaxConnLifetime)
	db.SetConnMaxIdleTime(cfg.MaxConnIdleTime)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres store: connecting to %s:%d/%s: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database, redact(err, url))
	}
	st := &Store{conn: cfg.ConnConfig}
	st.dialect = newDialect(st.Watch)
	st.dialect.WatchEvents = st.WatchEvents
	st.Store = sqlstore.New(db, st.dialect)
	return st, nil
}

var _ store.Store = (*Store)(nil)
