package store

import (
	"context"
	"encoding/json"
	"time"
)

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
