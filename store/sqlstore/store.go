// Package sqlstore is the one implementation of the store over
// database/sql: every table of store.Store, written once with ?
// placeholders, run on a backend through its Dialect. store/sqlite (the
// embedded default) and store/postgres (replicas sharing one database)
// open their database, migrate it and hand it here with their dialect.
package sqlstore

import (
	"context"
	"database/sql"
	"sync"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlstore/sqlembeddings"
	"github.com/legate-mcp/legate/store/sqlstore/sqlevents"
	"github.com/legate-mcp/legate/store/sqlstore/sqlkb"
	"github.com/legate-mcp/legate/store/sqlstore/sqlquotas"
)

// Store is a store.Store on a database/sql database.
type Store struct {
	db database
	d  *Dialect
}

// New is the store on db, whose schema the backend has migrated.
func New(db *sql.DB, d *Dialect) *Store { return &Store{db: database{db, d, new(sync.Map)}, d: d} }

// DB is the store's database, for tools and tests that need a raw
// statement.
func (s *Store) DB() *sql.DB { return s.db.db }

// Each accessor returns its store as the interface it implements, which
// the compiler checks.

// Connectors returns the connector store.
func (s *Store) Connectors() store.ConnectorStore { return connectorStore{s.db} }

// Upstreams returns the upstream store.
func (s *Store) Upstreams() store.UpstreamStore { return upstreamStore{s.db} }

// Pins returns the pin store.
func (s *Store) Pins() store.PinStore { return pinStore{s.db} }

// Approvals returns the approval inbox; it is a store.ApprovalWatcher
// when the dialect tells of changes.
func (s *Store) Approvals() store.ApprovalStore {
	if s.d.Watch != nil {
		return watchedApprovals{approvalStore{s.db}}
	}
	return approvalStore{s.db}
}

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

// AgentRuns returns the agent's history.
func (s *Store) AgentRuns() store.AgentRunStore { return agentRunStore{s.db} }

// Results returns the cut results kept for their callers.
func (s *Store) Results() store.ResultStore { return resultStore{s.db} }

// Quotas returns the counts of the budgets' windows.
func (s *Store) Quotas() store.QuotaStore { return sqlquotas.New(s.db.db, s.d.rebind) }

// KB returns the knowledge-base instances' documents (package sqlkb).
func (s *Store) KB() store.KBStore { return sqlkb.New(s.db.db, s.d.rebind) }

// Embeddings returns the tool search's embeddings, by key.
func (s *Store) Embeddings() store.EmbeddingStore { return sqlembeddings.New(s.db.db, s.d.rebind) }

// Events returns the inbound provider events (package sqlevents); it is
// a store.EventWatcher when the dialect tells of new events.
func (s *Store) Events() store.EventStore { return sqlevents.New(s.db.db, s.d.rebind, s.d.WatchEvents) }

// Close closes the database; watchers end with their contexts.
func (s *Store) Close() error { return s.db.db.Close() }

var _ store.Store = (*Store)(nil)

// watchedApprovals is the inbox of a dialect that tells of changes.
type watchedApprovals struct{ approvalStore }

// Watch tells of every approval whose state changes, in any process on
// the database (see Dialect.Watch).
func (w watchedApprovals) Watch(ctx context.Context) <-chan string { return w.db.d.Watch(ctx) }

var _ store.ApprovalWatcher = watchedApprovals{}
