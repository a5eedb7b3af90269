package store

import (
	"context"
	"encoding/json"
	"time"
)

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
