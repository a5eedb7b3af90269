package store

import (
	"context"
	"time"
)

// Event is one inbound provider event (a webhook delivery), verified and
// normalised (package hooks). Times go in milliseconds.
type Event struct {
	// ID is the store's own sequence number, increasing in insertion order.
	ID int64 `json:"id"`
	// Instance is the connector instance the delivery was addressed to,
	// Tenant that instance's tenant ("" shared) and Provider its type.
	Instance string `json:"instance"`
	Tenant   string `json:"tenant,omitempty"`
	Provider string `json:"provider"`
	// ProviderID is the provider's own id of the event (Slack's event_id,
	// GitHub's delivery id, Stripe's evt_…): one event per instance and id.
	ProviderID string `json:"provider_event_id"`
	// Kind is the normalised kind (message.posted, issues.opened).
	Kind string `json:"kind"`
	// Object and Actor are the provider's ids (or URLs) of what the event
	// is about and of who caused it; either may be "".
	Object string `json:"object,omitempty"`
	Actor  string `json:"actor,omitempty"`
	// Time is when the provider says the event happened, Received when
	// the delivery arrived.
	Time     time.Time `json:"time"`
	Received time.Time `json:"received"`
	// Meta is a small JSON object of provider metadata, sanitized.
	Meta []byte `json:"meta,omitempty"`
	// Payload is the delivery's body as received, cut to a bound
	// (Truncated then says so).
	Payload   []byte `json:"payload,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

// EventQuery selects the events of one instance; zero fields match all.
type EventQuery struct {
	Instance string
	// Kind is an exact kind, or a prefix ending in "." ("issues.").
	Kind string
	// Since keeps the events received at or after it.
	Since time.Time
	// BeforeID keeps the events older than that id (a page's cursor).
	BeforeID int64
	// Limit bounds the events returned (default and maximum 1000).
	Limit int
}

// EventStore keeps inbound provider events, deduplicated by instance and
// provider event id: providers retry deliveries.
type EventStore interface {
	// Add stores e (its ID and Received are set by the store when zero)
	// and returns it with its ID and true; when the instance holds an event
	// with that ProviderID already, it stores nothing and returns the
	// stored event and false. Of racing Adds of one event exactly one
	// returns true.
	Add(ctx context.Context, e Event) (Event, bool, error)
	// List returns the matching events newest first (by ID).
	List(ctx context.Context, q EventQuery) ([]Event, error)
	// Prune deletes the events received before t and returns how many.
	Prune(ctx context.Context, before time.Time) (int64, error)
}

// EventWatcher is an optional ability of an EventStore shared by several
// processes: it tells of the events any of them adds, sending the
// instance id of each (best effort; "" when some may have been missed),
// until ctx ends.
type EventWatcher interface {
	WatchEvents(ctx context.Context) <-chan string
}
