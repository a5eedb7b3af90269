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
