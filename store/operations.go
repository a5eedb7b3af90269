package store

import (
	"context"
	"time"
)

// OperationStore keeps the idempotency records of connector writes: one
// record per scope (a connector instance id) and key (the call's operation
// id), claimed before the write and finished with its outcome after, so
// that a retried call returns the first outcome instead of writing again.
// Claims are leased: a claim whose lease ran out may be taken again, and
// the taker is told that an earlier attempt's fate is unknown.
type OperationStore interface {
	// Begin claims (scope, key) until now+lease, atomically: a new record
	// is OpNew; a record with no outcome whose lease ended is claimed
	// again as OpRetry with Attempts incremented; one whose lease runs is
	// OpBusy; a finished one is OpDone with its outcome. Of many callers
	// racing on one key, exactly one claims it.
	Begin(ctx context.Context, scope, key string, now time.Time, lease time.Duration) (Operation, error)
	// Finish records the outcome of (scope, key). A key never begun is an
	// error wrapping ErrNotFound; a key finished already keeps its first
	// outcome and the error wraps ErrConflict.
	Finish(ctx context.Context, scope, key string, outcome []byte, now time.Time) error
	// Abandon ends the lease of an unfinished (scope, key), so that the
	// next Begin claims it as OpRetry. A finished or unknown key is left
	// as it is, without error.
	Abandon(ctx context.Context, scope, key string) error
	// Prune removes the records begun before t, finished or not, and
	// returns how many.
	Prune(ctx context.Context, before time.Time) (int, error)
}

// OperationState is what OperationStore.Begin found.
type OperationState string

// The states of an operation record.
const (
	OpNew   OperationState = "new"
	OpRetry OperationState = "retry"
	OpBusy  OperationState = "busy"
	OpDone  OperationState = "done"
)

// Operation is one idempotency record. Times go in milliseconds.
type Operation struct {
	State      OperationState
	Attempts   int
	Started    time.Time
	LeaseUntil time.Time
	Outcome    []byte
}
