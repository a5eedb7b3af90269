// Package store is Legate's persistence. The rest of the code depends only
// on the Store interface here. store/sqlstore implements it once, over
// database/sql; store/sqlite (the embedded default) and store/postgres
// (the store replicas share) are its dialects. Every backend passes the suite
// in store/storetest, which holds the contract the interfaces' docs state:
// keys and sentinel errors, orderings, filters, and the approval inbox's
// compare-and-set transitions; a backend several processes share passes
// its shared run too (storetest.RunShared).
//
// Optional abilities are interfaces a backend's sub-stores may implement,
// checked with a type assertion where they are used:
//
//   - ApprovalWatcher (on the ApprovalStore): tells of approval changes
//     made by any process; policy.Inbox.Follow wakes waiting calls with it
//     instead of waiting for their next poll.
package store

import "errors"

// Store is everything Legate keeps. Implementations are safe for concurrent use.
type Store interface {
	// Connectors holds the connector instances added through the CLI or API.
	Connectors() ConnectorStore
	// Upstreams holds upstream MCP servers added through the CLI or API,
	// and every upstream's cached tool definitions.
	Upstreams() UpstreamStore
	// Pins holds the accepted definition of every upstream tool.
	Pins() PinStore
	// Approvals is the approval inbox.
	Approvals() ApprovalStore
	// Audit is the audit log.
	Audit() AuditStore
	// Secrets holds the vault's encrypted secrets.
	Secrets() SecretStore
	// Tokens holds the static bearer tokens callers authenticate with.
	Tokens() TokenStore
	// Operations holds the idempotency records of connector writes.
	Operations() OperationStore
	// Users holds the local accounts of the authorization server.
	Users() UserStore
	// OAuth holds the authorization server's clients, requests and tokens.
	OAuth() OAuthStore
	// AgentRuns holds the agent's history.
	AgentRuns() AgentRunStore
	// Results holds the whole of results cut to a token budget, for
	// their callers to read.
	Results() ResultStore
	// Events holds inbound provider events (webhook deliveries).
	Events() EventStore
	// Quotas counts the use of budgets per window.
	Quotas() QuotaStore
	// KB holds the documents and passages of the knowledge-base
	// connector's instances, for their replicas to share.
	KB() KBStore
	// Embeddings holds the tool search's embeddings by their key.
	Embeddings() EmbeddingStore
	// Close releases the store.
	Close() error
}

// Sentinel errors, matched with errors.Is.
var (
	// ErrNotFound: no such record; the caller reports it by name.
	ErrNotFound = errors.New("not found")
	// ErrExists: a record with that key exists; the caller picks another key
	// or removes the old record first.
	ErrExists = errors.New("already exists")
	// ErrConflict: the record is not in the state the change needs (an
	// approval decided already); the caller re-reads it and reports.
	ErrConflict = errors.New("conflict")
)
