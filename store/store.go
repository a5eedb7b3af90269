// Package store is Legate's persistence. The rest of the code depends only
// on the Store interface here; store/sqlite is the embedded default.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

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
	// Close releases the store.
	Close() error
}

// ConnectorStore keeps connector instances.
type ConnectorStore interface {
	// List returns every stored instance, sorted by id.
	List(ctx context.Context) ([]Connector, error)
	// Get returns one instance or an error wrapping ErrNotFound.
	Get(ctx context.Context, id string) (Connector, error)
	// Create adds an instance; an existing id is an error wrapping ErrExists.
	Create(ctx context.Context, c Connector) error
	// Delete removes an instance or returns an error wrapping ErrNotFound.
	Delete(ctx context.Context, id string) error
}

// UpstreamStore keeps upstream definitions and their tool caches.
type UpstreamStore interface {
	// List returns the stored upstream definitions, sorted by id.
	List(ctx context.Context) ([]Upstream, error)
	// Create adds a definition; an existing id is an error wrapping ErrExists.
	Create(ctx context.Context, u Upstream) error
	// Delete removes a definition and its cache, or returns an error
	// wrapping ErrNotFound.
	Delete(ctx context.Context, id string) error

	// Cache returns the cached tools and status of every upstream that has
	// been refreshed, keyed by upstream id.
	Cache(ctx context.Context) (map[string]UpstreamCache, error)
	// CacheOf returns one upstream's cached tools and status (zero if none).
	CacheOf(ctx context.Context, id string) (UpstreamCache, error)
	// SaveCache replaces one upstream's cached tools and resource URIs (when
	// tools is non-nil) and records the refresh time and error (empty on success).
	SaveCache(ctx context.Context, id string, tools []CachedTool, resources []string, refreshed time.Time, lastErr string) error
	// DeleteCache removes one upstream's cache (for an upstream no longer configured).
	DeleteCache(ctx context.Context, id string) error
	// CacheVersion changes whenever any cache changes or a pin is accepted;
	// a server polls it to pick up what another process (the CLI) did.
	CacheVersion(ctx context.Context) (int64, error)
}

// Upstream is a stored upstream definition.
type Upstream struct {
	ID string
	// Definition is the upstream's configuration as a JSON object, in the
	// shape of one entry of `upstreams:` in config.yaml.
	Definition json.RawMessage
	CreatedAt  time.Time
}

// UpstreamCache is one upstream's cached tool list and refresh status.
type UpstreamCache struct {
	Tools []CachedTool
	// Resources are the URIs of the upstream's resources at the last refresh.
	Resources   []string
	RefreshedAt time.Time // last successful refresh
	CheckedAt   time.Time // last attempt
	LastError   string
}

// CachedTool is one tool definition as the upstream sent it.
type CachedTool struct {
	Name string
	// Definition is the tool's JSON as listed by the upstream.
	Definition json.RawMessage
	// Hash is the SHA-256 of the definition's canonical JSON, hex.
	Hash string
}

// Connector is a stored connector instance.
type Connector struct {
	ID   string
	Type string
	// Config is the instance's config section as a JSON object.
	Config json.RawMessage
	// Credentials maps credential names to references ({"env": "NAME"}),
	// never to values.
	Credentials json.RawMessage
	CreatedAt   time.Time
}

// PinStore keeps the definition hash each upstream tool is pinned to.
type PinStore interface {
	// List returns every pin, by upstream id then tool name, without their
	// definitions (Get has those).
	List(ctx context.Context) (map[string]map[string]Pin, error)
	// Get returns one pin with its definition, or an error wrapping ErrNotFound.
	Get(ctx context.Context, upstream, tool string) (Pin, error)
	// Set pins a tool to a definition. With ifAbsent, an existing pin is
	// kept (trust on first use); otherwise it is replaced (an admin accepting).
	Set(ctx context.Context, upstream, tool string, p Pin, ifAbsent bool) error
}

// Pin is the accepted definition of one upstream tool.
type Pin struct {
	Hash       string
	Definition json.RawMessage
	AcceptedAt time.Time
	AcceptedBy string // "tofu" for a pin taken on first sight
}

// The states of an approval request.
const (
	StatePending   = "pending"
	StateApproved  = "approved"
	StateDenied    = "denied"
	StateExpired   = "expired"
	StateExecuting = "executing"
	StateExecuted  = "executed"
	StateFailed    = "failed"
)

// Approval is one request in the approval inbox.
type Approval struct {
	ID        string
	Principal string
	Tenant    string
	Session   string
	Tool      string // canonical name
	Class     string
	// Args are the arguments in full, shown to approvers; ArgsHash, the
	// SHA-256 of their canonical JSON, binds the approval to them.
	Args     json.RawMessage
	ArgsHash string
	// DefHash is the hash of the tool's definition when the request was
	// made; a call runs only if the definition still has it.
	DefHash string
	// Definition is the tool's definition as clients saw it, for approvers.
	Definition json.RawMessage
	State      string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	DecidedAt  time.Time
	Decider    string
	Reason     string
	// Outcome is the MCP result of the execution, once executed or failed.
	Outcome json.RawMessage
}

// Binding is what makes two calls the same request.
type Binding struct {
	Principal, Tenant, Tool, ArgsHash, DefHash string
}

// ApprovalFilter selects approval requests. Its zero value selects the
// requests of the shared tenant (""), never every tenant: seeing every
// tenant must be asked for with AllTenants.
type ApprovalFilter struct {
	// State keeps requests in that state; "" keeps every state.
	State string
	// Tenant keeps the requests of that tenant, "" being the shared one (of
	// principals without a tenant). Ignored with AllTenants.
	Tenant string
	// AllTenants keeps the requests of every tenant; only an admin's view.
	AllTenants bool
	// Limit caps the requests returned (0: 100).
	Limit int
}

// ApprovalStore is the durable approval inbox. State changes are atomic
// compare-and-set operations, so an approval is decided once and executed
// once however many processes and goroutines race for it.
type ApprovalStore interface {
	// Create adds a pending request.
	Create(ctx context.Context, a *Approval) error
	// Get returns one request or an error wrapping ErrNotFound.
	Get(ctx context.Context, id string) (*Approval, error)
	// List returns the requests f selects, newest first.
	List(ctx context.Context, f ApprovalFilter) ([]*Approval, error)
	// Find returns the newest request with the binding that is not expired
	// and was created after since, or ErrNotFound.
	Find(ctx context.Context, b Binding, since time.Time) (*Approval, error)
	// Decide moves a pending, unexpired request to approved or denied. A
	// request not pending is an error wrapping ErrConflict.
	Decide(ctx context.Context, id string, approve bool, decider, reason string, now time.Time) (*Approval, error)
	// Claim moves an approved request to executing, with a heartbeat of now,
	// and reports whether this caller won it: only the winner may execute.
	Claim(ctx context.Context, id string, now time.Time) (bool, error)
	// Heartbeat tells that the executing request's run is still alive.
	Heartbeat(ctx context.Context, id string, now time.Time) error
	// Finish records the outcome of a claimed request: executed or failed.
	Finish(ctx context.Context, id, state string, outcome json.RawMessage) error
	// Expire marks pending requests whose time is past expired.
	Expire(ctx context.Context, now time.Time) (int, error)
	// FailInterrupted marks failed, with the outcome given, every executing
	// request whose last heartbeat is before staleBefore: its process
	// stopped, nobody knows whether it ran, so it must not run again.
	FailInterrupted(ctx context.Context, staleBefore time.Time, outcome json.RawMessage) (int, error)
	// CountPending counts pending requests.
	CountPending(ctx context.Context) (int, error)
}

// AuditRow is one audited call or event. It never holds argument values.
type AuditRow struct {
	ID         int64         `json:"id"`
	Time       time.Time     `json:"time"`
	Principal  string        `json:"principal"`
	Tenant     string        `json:"tenant,omitempty"`
	Session    string        `json:"session,omitempty"`
	Tool       string        `json:"tool"`
	Source     string        `json:"source"`
	Class      string        `json:"class"`
	Decision   string        `json:"decision"` // allow, deny, approve, or an event: quarantined
	Rule       string        `json:"rule,omitempty"`
	ApprovalID string        `json:"approval_id,omitempty"`
	Outcome    string        `json:"outcome"` // ok, or the canonical error code
	Latency    time.Duration `json:"latency_ns"`
	ArgsHash   string        `json:"args_hash,omitempty"`
	ResultSize int           `json:"result_size"`
	Detail     string        `json:"detail,omitempty"`
}

// AuditQuery selects audit rows; zero fields match all.
type AuditQuery struct {
	Tool      string
	Principal string
	Since     time.Time
	AfterID   int64
	Limit     int
}

// AuditStore is the append-only audit log.
type AuditStore interface {
	// Append writes rows in one transaction.
	Append(ctx context.Context, rows []AuditRow) error
	// Query returns matching rows in id order, after AfterID; with no
	// AfterID and a Limit, the newest Limit rows.
	Query(ctx context.Context, q AuditQuery) ([]AuditRow, error)
	// Prune deletes rows older than before.
	Prune(ctx context.Context, before time.Time) (int64, error)
}

// Secret is one version of one vault secret as stored: the value encrypted
// under its own data key, that key wrapped by a key-encryption key. The
// store never sees a value; package vault seals and opens these.
type Secret struct {
	Tenant  string // "" for a secret shared by every tenant
	Name    string
	Version int
	// KeyID names the key-encryption key that wrapped WrappedKey.
	KeyID      string
	WrappedKey []byte
	Ciphertext []byte
	CreatedAt  time.Time
}

// SecretRewrap replaces the wrapped data key of one stored version.
type SecretRewrap struct {
	// Old is the version as read: the change applies only if the row still
	// holds Old.KeyID and Old.WrappedKey.
	Old        Secret
	KeyID      string
	WrappedKey []byte
}

// SecretStore keeps vault secrets, every version of each, keyed by tenant,
// name and version.
type SecretStore interface {
	// Create stores one version; an existing tenant, name and version is an
	// error wrapping ErrExists (the caller numbers it again and retries).
	Create(ctx context.Context, s Secret) error
	// Get returns one version of a secret, the newest when version is 0,
	// or an error wrapping ErrNotFound.
	Get(ctx context.Context, tenant, name string, version int) (Secret, error)
	// List returns every version without its wrapped key and ciphertext,
	// sorted by tenant, name and version.
	List(ctx context.Context) ([]Secret, error)
	// Delete removes every version of a secret and says how many there
	// were; none is an error wrapping ErrNotFound.
	Delete(ctx context.Context, tenant, name string) (int, error)
	// KeyUsage counts the stored versions wrapped by each key id.
	KeyUsage(ctx context.Context) (map[string]int, error)
	// NotWrappedBy returns up to limit versions whose data key is not
	// wrapped by keyID, with their wrapped keys but no ciphertext, sorted by
	// tenant, name and version.
	NotWrappedBy(ctx context.Context, keyID string, limit int) ([]Secret, error)
	// Rewrap applies the changes in one transaction, each only if its row
	// is still as read, and says how many rows changed.
	Rewrap(ctx context.Context, changes []SecretRewrap) (int, error)
}

// Token is a static bearer token as stored: its SHA-256 hash and the
// principal it authenticates, never the token itself.
type Token struct {
	// Name is the principal's name, unique among tokens.
	Name    string
	Tenant  string
	Role    string
	Profile string
	// Hash is the hex SHA-256 of the token.
	Hash      string
	CreatedAt time.Time
	// RevokedAt is when the token was revoked, zero while it is valid.
	RevokedAt time.Time
}

// TokenStore keeps static tokens by name and by hash. A revoked token stays,
// keeping its name taken, so an audit row's principal names one token.
type TokenStore interface {
	// Create stores a token; a name or hash in use is an error wrapping ErrExists.
	Create(ctx context.Context, t Token) error
	// ByHash returns the token, revoked or not, with the hash, or an error
	// wrapping ErrNotFound.
	ByHash(ctx context.Context, hash string) (Token, error)
	// List returns every token without its hash, sorted by name.
	List(ctx context.Context) ([]Token, error)
	// Revoke marks a token revoked at the given time: an unknown name is an
	// error wrapping ErrNotFound, a revoked one wrapping ErrConflict.
	Revoke(ctx context.Context, name string, at time.Time) error
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
