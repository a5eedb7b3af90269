package store

import (
	"context"
	"encoding/json"
	"time"
)

// ConnectorStore keeps connector instances.
type ConnectorStore interface {
	// List returns every stored instance, sorted by id.
	List(ctx context.Context) ([]Connector, error)
	// Get returns one instance or an error wrapping ErrNotFound.
	Get(ctx context.Context, id string) (Connector, error)
	// Create adds an instance, a zero CreatedAt meaning now; an existing id
	// is an error wrapping ErrExists.
	Create(ctx context.Context, c Connector) error
	// Delete removes an instance or returns an error wrapping ErrNotFound.
	Delete(ctx context.Context, id string) error
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
	// Access is whose credential a call uses and the OAuth app per-user
	// connections are made with, as a JSON object
	// ({"credentials_mode": "per_user", "oauth": {...}}); its client
	// secret is a reference, never a value.
	Access    json.RawMessage
	CreatedAt time.Time
}
