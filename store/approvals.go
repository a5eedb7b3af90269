package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The states of an approval request.
const (
	StatePending   = "pending"
	StateApproved  = "approved"
	StateDenied    = "denied"
	StateExpired   = "expired"
	StateExecuting = "executing"
	StateExecuted  = "executed"
	StateFailed    = "failed"
)

// States lists every state of an approval request, in the order a request
// goes through them.
var States = []string{StatePending, StateApproved, StateDenied, StateExpired, StateExecuting, StateExecuted, StateFailed}

// CheckState reports an error naming the states when s, a state to list
// by, is none of them ("" lists every state).
func CheckState(s string) error {
	if s == "" || slices.Contains(States, s) {
		return nil
	}
	return fmt.Errorf("unknown approval state %q: want one of %s", s, strings.Join(States, ", "))
}

// Approval is one request in the approval inbox.
type Approval struct {
	ID        string
	Principal string
	Tenant    string
	Session   string
	// Profile is the profile whose view the call was made in (as the
	// audit row's), CredentialSet the credential set of the instance it
	// uses (its profile's credentials_name): whoever runs the request runs
	// it with them.
	Profile       string
	CredentialSet string
	Tool          string // canonical name
	Class         string
	// Args are the arguments in full, shown to approvers; ArgsHash, the
	// SHA-256 of their canonical JSON, binds the approval to them.
	Args     json.RawMessage
	ArgsHash string
	// DefHash is the hash of the tool's definition when the request was
	// made; a call runs only if the definition still has it.
	DefHash string
	// Definition is the tool's definition as clients saw it, for approvers.
	Definition json.RawMessage
	State      string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	DecidedAt  time.Time
	Decider    string
	Reason     string
	// Outcome is the MCP result of the execution, once executed or failed.
	Outcome json.RawMessage
}

// Live reports whether a, found for a binding, is still the request its
// calls share at now: any but a pending request past its expiry (which
// Expire has not marked yet), for which a new call opens a new request.
func (a *Approval) Live(now time.Time) bool {
	return a.State != StatePending || a.ExpiresAt.After(now)
}

// ProfileOr is the profile a's call was made in, or for a nil a (a call
// not run from an approval request), p.
func (a *Approval) ProfileOr(p string) string {
	if a == nil {
		return p
	}
	return a.Profile
}

// CredentialSetOr is the credential set a's call uses, or for a nil a,
// set.
func (a *Approval) CredentialSetOr(set string) string {
	if a == nil {
		return set
	}
	return a.CredentialSet
}

// Binding is what makes two calls the same request.
type Binding struct {
	Principal, Tenant, Tool, ArgsHash, DefHash string
}

// ApprovalFilter selects approval requests. Its zero value selects the
// requests of the shared tenant (""), never every tenant: seeing every
// tenant must be asked for with AllTenants.
type ApprovalFilter struct {
	// State keeps requests in that state; "" keeps every state.
	State string
	// Tenant keeps the requests of that tenant, "" being the shared one (of
	// principals without a tenant). Ignored with AllTenants.
	Tenant string
	// AllTenants keeps the requests of every tenant; only an admin's view.
	AllTenants bool
	// Limit caps the requests returned (0: 100).
	Limit int
}

// ApprovalStore is the durable approval inbox. State changes are atomic
// compare-and-set operations, so an approval is decided once and executed
// once however many processes and goroutines race for it.
type ApprovalStore interface {
	// Create adds a pending request; an existing id is an error wrapping
	// ErrExists (the caller draws another id).
	Create(ctx context.Context, a *Approval) error
	// Get returns one request or an error wrapping ErrNotFound.
	Get(ctx context.Context, id string) (*Approval, error)
	// List returns the requests f selects, newest first.
	List(ctx context.Context, f ApprovalFilter) ([]*Approval, error)
	// Find returns the newest request with the binding that is not expired
	// and was created after since, or ErrNotFound.
	Find(ctx context.Context, b Binding, since time.Time) (*Approval, error)
	// Open returns the request that calls with a's binding share: the one
	// Find returns with since, unless it is no longer Live at now; with
	// none, it creates a (as Create does) and reports created. Concurrent
	// Opens of one binding, in any number of goroutines and processes,
	// return one request: Find and Create in one step.
	Open(ctx context.Context, a *Approval, since, now time.Time) (req *Approval, created bool, err error)
	// Decide moves a pending, unexpired request to approved or denied. A
	// request not pending is an error wrapping ErrConflict.
	Decide(ctx context.Context, id string, approve bool, decider, reason string, now time.Time) (*Approval, error)
	// Claim moves an approved request to executing, with a heartbeat of now,
	// and reports whether this caller won it: only the winner may execute.
	Claim(ctx context.Context, id string, now time.Time) (bool, error)
	// Heartbeat tells that the executing request's run is still alive. A
	// request no longer executing (failed as interrupted) is an error
	// wrapping ErrConflict: its run has lost the claim.
	Heartbeat(ctx context.Context, id string, now time.Time) error
	// Finish records the outcome of a claimed request: state is executed or
	// failed. A request not executing (finished already, or failed as
	// interrupted) is an error wrapping ErrConflict and keeps its outcome.
	Finish(ctx context.Context, id, state string, outcome json.RawMessage) error
	// Expire marks pending requests whose time is past expired.
	Expire(ctx context.Context, now time.Time) (int, error)
	// FailInterrupted marks failed, with the outcome given, every executing
	// request whose last heartbeat is before staleBefore: its process
	// stopped, nobody knows whether it ran, so it must not run again.
	FailInterrupted(ctx context.Context, staleBefore time.Time, outcome json.RawMessage) (int, error)
	// CountPending counts pending requests.
	CountPending(ctx context.Context) (int, error)
}
