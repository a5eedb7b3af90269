package admin

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
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
