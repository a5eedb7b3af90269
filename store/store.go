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
	// SaveCache replaces one upstream's cached tools and resource URIs (when
	// tools is non-nil) and records the refresh time and error (empty on success).
	SaveCache(ctx context.Context, id string, tools []CachedTool, resources []string, refreshed time.Time, lastErr string) error
	// DeleteCache removes one upstream's cache (for an upstream no longer configured).
	DeleteCache(ctx context.Context, id string) error
	// CacheVersion changes whenever any cache changes; a server polls it to
	// pick up refreshes made by another process.
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

// Sentinel errors, matched with errors.Is.
var (
	// ErrNotFound: no such record; the caller reports it by name.
	ErrNotFound = errors.New("not found")
	// ErrExists: a record with that key exists; the caller picks another key
	// or removes the old record first.
	ErrExists = errors.New("already exists")
)
