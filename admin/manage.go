package admin

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/quota"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/vault"
)

// ErrInvalid marks an error of ManageOps caused by what the caller sent (a
// config that does not validate, an unknown type): the API answers it 400.
var ErrInvalid = errors.New("invalid")

// ManageOps are the operations behind the API's management routes
// (connectors, upstreams, tools, sessions, audit, tokens). An Ops without
// them answers 404 there. Errors wrap store.ErrNotFound (404),
// store.ErrExists or store.ErrConflict (409) or ErrInvalid (400). Each
// change records its own audit row, naming the caller the API puts in
// its context (WithCaller), so that it is audited the same whoever calls.
type ManageOps interface {
	// Connectors lists the connector instances the server runs, with the
	// last test of each.
	Connectors(ctx context.Context) ([]Connector, error)
	// Connector is one instance's record, its config with it.
	Connector(ctx context.Context, id string) (Connector, error)
	// AddConnector validates an instance and adds it to the store, where
	// the running server picks it up.
	AddConnector(ctx context.Context, c NewConnector) (Connector, error)
	// RemoveConnector removes a stored instance.
	RemoveConnector(ctx context.Context, id string) error
	// TestConnector runs an instance's connection test.
	TestConnector(ctx context.Context, id string) (ConnectorTest, error)
	// Upstreams lists the upstreams with their live state.
	Upstreams(ctx context.Context) ([]UpstreamStatus, error)
	// AddUpstream adds an upstream definition, one entry of `upstreams:`
	// as JSON, to the store; with connect, it connects to it and caches
	// its tools, and removes it again when that fails.
	AddUpstream(ctx context.Context, def json.RawMessage, connect bool) (Refresh, error)
	// RemoveUpstream removes a stored upstream and its cache.
	RemoveUpstream(ctx context.Context, id string) error
	// RefreshUpstream lists an upstream's tools again and caches them.
	RefreshUpstream(ctx context.Context, id string) (Refresh, error)
	// Quarantine lists the quarantined tools, of one upstream or ("") all.
	Quarantine(ctx context.Context, upstream string) ([]QuarantinedTool, error)
	// Accept accepts the current definitions of an upstream's tools (all
	// by default), releasing them from quarantine.
	Accept(ctx context.Context, upstream, by string, tools []string) ([]string, error)
	// Tools lists the catalog; for a principal, what it sees (its view).
	Tools(ctx context.Context, as *auth.Principal) ([]Tool, error)
	// Sessions lists the live MCP sessions.
	Sessions(ctx context.Context) ([]Session, error)
	// Budgets lists the use of each budget of budgets: in its current
	// window, of every principal and tenant that used any.
	Budgets(ctx context.Context) ([]quota.Usage, error)
	// CloseSession ends one session.
	CloseSession(ctx context.Context, id string) error
	// QueryAudit reads the audit log.
	QueryAudit(ctx context.Context, q store.AuditQuery) ([]store.AuditRow, error)
	// Tokens lists the static tokens, without their hashes.
	Tokens(ctx context.Context) ([]store.Token, error)
	// CreateToken makes a static token and returns it, the only time it is shown.
	CreateToken(ctx context.Context, p auth.Principal) (string, error)
	// RevokeToken revokes a static token.
	RevokeToken(ctx context.Context, name string) error
	// Held explains why a request waits for approval (the policy decision
	// for it now) and, when its tool is quarantined, the definitions.
	Held(ctx context.Context, a *store.Approval) Hold
}

// Connector is a connector instance as the API shows it: its credentials
// as references (env:VAR, vault:NAME), never values.
type Connector struct {
	ID          string            `json:"id"`
	Type        string            `json:"type"`
	Tenant      string            `json:"tenant,omitempty"`
	Origin      string            `json:"origin"`
	Tools       int               `json:"tools"`
	Credentials map[string]string `json:"credentials,omitempty"`
	// CredentialsMode and OAuth say whose credential a call uses and the
	// OAuth app people connect their own accounts with (its client secret
	// a reference).
	CredentialsMode string                 `json:"credentials_mode"`
	OAuth           *config.ConnectorOAuth `json:"oauth,omitempty"`
	// UserCredential is the credential people supply themselves, for a
	// per-user instance without an OAuth app.
	UserCredential string         `json:"user_credential,omitempty"`
	LastTest       *ConnectorTest `json:"last_test,omitempty"`
	ConnectorRecord
	// Config is the instance's config section (GET /admin/v1/connectors/{id}
	// only); it holds no secret, those being credentials.
	Config json.RawMessage `json:"config,omitempty"`
}

// The statuses of a connector instance (ConnectorRecord.Status).
const (
	// StatusActive: its circuit is closed, and nothing below holds.
	StatusActive = "active"
	// StatusDegraded: its circuit is open or half-open, its provider
	// failed lately, its last test failed, its credential lacks scopes
	// its tools need, or its credential is for another environment than
	// its config says; StatusReasons say which.
	StatusDegraded = "degraded"
	// StatusDisabled: its config disables it; it offers no tools.
	StatusDisabled = "disabled"
)

// ConnectorRecord is what the gateway knows of a connector instance
// beyond its definition: how it is doing, what it speaks, what its
// credential may do.
type ConnectorRecord struct {
	// Environment is production or sandbox: as its config says, else as
	// its credential or settings tell (a Stripe test key); "" unknown.
	Environment string `json:"environment"`
	// Status is active, degraded or disabled; StatusReasons say why it
	// is not active.
	Status        string   `json:"status"`
	StatusReasons []string `json:"status_reasons,omitempty"`
	// Circuit is closed, half-open or open as the server holds it now;
	// "" when no server runs the instance.
	Circuit string `json:"circuit"`
	// Failures counts the provider failures in a row the breaker holds;
	// LastFailure is the last one, RetryAt, with an open circuit, when a
	// trial call is let through.
	Failures      int       `json:"failures,omitempty"`
	LastFailure   string    `json:"last_failure,omitempty"`
	LastFailureAt time.Time `json:"last_failure_at,omitzero"`
	RetryAt       time.Time `json:"retry_at,omitzero"`
	// AdapterVersion is the connector's own version, APIVersion the
	// provider API's it speaks (for a database, the server's version its
	// last test read); "" when it does not say.
	AdapterVersion string `json:"adapter_version,omitempty"`
	APIVersion     string `json:"api_version,omitempty"`
	// Scopes compares the scopes the credential has with those the
	// instance's tools need, where the provider has scopes.
	Scopes *Scopes `json:"scopes,omitempty"`
}

// Scopes are a credential's scopes against an instance's needs.
type Scopes struct {
	// Needs are the scopes the instance's tools need.
	Needs []string `json:"needs"`
	// Known says the last test learned the credential's scopes: Has are
	// then those it has and Missing those of Needs it lacks (a scope that
	// implies another counts for it).
	Known   bool     `json:"known"`
	Has     []string `json:"has"`
	Missing []string `json:"missing"`
}

// NewConnector is the body of POST /admin/v1/connectors. Credentials are
// references; Secrets are values the server stores in the vault (the
// shared tenant's, named <id>.<credential>) and refers to, never to be
// shown again. A stored instance is shared by every tenant: Tenant must be
// empty (a tenant's own instance goes in the config file). CredentialsMode
// and OAuth are as a config file's instance has them; the OAuth app's
// client secret is a reference, or a value in Secrets under
// SecretOAuthClient.
type NewConnector struct {
	ID          string               `json:"id"`
	Type        string               `json:"type"`
	Tenant      string               `json:"tenant,omitempty"`
	Config      map[string]any       `json:"config,omitempty"`
	Credentials map[string]vault.Ref `json:"credentials,omitempty"`
	Secrets     map[string]string    `json:"secrets,omitempty"`
	// CredentialsMode is shared (the default), per_user or
	// per_user_or_shared; the last two need OAuth, or UserCredential: the
	// credential each person supplies themselves.
	CredentialsMode string                 `json:"credentials_mode,omitempty"`
	OAuth           *config.ConnectorOAuth `json:"oauth,omitempty"`
	UserCredential  string                 `json:"user_credential,omitempty"`
}

// SecretOAuthClient is the key in NewConnector.Secrets of the OAuth app's
// client secret, stored in the vault as <id>.oauth.client_secret.
const SecretOAuthClient = "oauth.client_secret"

// ConnectorTest is the outcome of one connection test.
type ConnectorTest struct {
	ID     string    `json:"id"`
	OK     bool      `json:"ok"`
	Error  string    `json:"error,omitempty"`
	Report []string  `json:"report,omitempty"`
	At     time.Time `json:"at"`
}

// Refresh is what a refresh of an upstream changed.
type Refresh struct {
	ID      string   `json:"id"`
	Tools   int      `json:"tools"`
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Changed []string `json:"changed,omitempty"`
}

// QuarantinedTool is a quarantined tool: the definition accepted before
// beside the one its upstream lists now.
type QuarantinedTool struct {
	Upstream     string          `json:"upstream"`
	Tool         string          `json:"tool"`
	Name         string          `json:"name"`
	AcceptedHash string          `json:"accepted_hash,omitempty"`
	Hash         string          `json:"hash"`
	Accepted     json.RawMessage `json:"accepted,omitempty"`
	Now          json.RawMessage `json:"now"`
}

// Tool is one catalog entry: where it comes from, its class, and what the
// policy does with a call to it by the principal asked about (or the
// server's own principal).
type Tool struct {
	Name       string          `json:"name"`
	Wire       string          `json:"wire_name"`
	Source     string          `json:"source"`
	Tenant     string          `json:"tenant,omitempty"`
	Class      string          `json:"class"`
	Decision   string          `json:"decision"`
	Rule       string          `json:"rule"`
	Reason     string          `json:"reason,omitempty"`
	Definition json.RawMessage `json:"definition"`
}

// Session is one live MCP session.
type Session struct {
	ID         string    `json:"id"`
	Principal  string    `json:"principal"`
	Tenant     string    `json:"tenant,omitempty"`
	Credential string    `json:"credential,omitempty"` // static or jwt, with authentication on
	OpenedAt   time.Time `json:"opened_at,omitzero"`
	AgeSeconds float64   `json:"age_seconds"`
	LastSeen   time.Time `json:"last_seen,omitzero"`
}

// Hold is why a request waits: the policy's decision for it, and the
// definitions of its tool when the tool is quarantined.
type Hold struct {
	Decision   string           `json:"decision,omitempty"`
	Rule       string           `json:"rule,omitempty"`
	Reason     string           `json:"reason,omitempty"`
	Quarantine *QuarantinedTool `json:"quarantine,omitempty"`
}
