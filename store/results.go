package store

import (
	"context"
	"time"
)

// KeptResult is the whole of a tool result that reached its caller cut to
// a token budget (package resultcut), kept so that the caller can read the
// rest: only by the tenant and principal that made the call, and only
// until it expires.
type KeptResult struct {
	// ID is the reference the cut result's notice names.
	ID        string
	Tenant    string
	Principal string
	// Tool is the canonical name of the tool that returned it.
	Tool string
	// Budget is the token budget the result was cut to; its pages are
	// read within it.
	Budget    int
	CreatedAt time.Time
	ExpiresAt time.Time
	// Body is what is kept (resultcut's document, JSON).
	Body []byte
}

// ResultStore keeps cut results for their callers, for any replica to serve.
type ResultStore interface {
	// Put stores r under its id, which is new (ErrExists otherwise).
	// Times go in milliseconds.
	Put(ctx context.Context, r KeptResult) error
	// Get returns the result with id that tenant and principal kept and
	// that has not expired at now; any other, an error wrapping
	// ErrNotFound, whether it exists or not.
	Get(ctx context.Context, id, tenant, principal string, now time.Time) (KeptResult, error)
	// Prune deletes the results that expired before before, reporting how
	// many.
	Prune(ctx context.Context, before time.Time) (int64, error)
}
