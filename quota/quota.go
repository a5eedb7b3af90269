// Package quota holds how much callers may use of the gateway: the rate
// limits of limits: (package ratelimit), and the budgets of budgets: —
// what each principal (of a tenant) and each tenant may use per fixed
// window (calls, bytes of results, write calls), counted in the store so
// that replicas sharing one share every budget. The call path's limit
// step asks a Gate to admit each call before the policy decides on it, and
// tells it how the call ended; a call over a limit fails RATE_LIMITED, one
// over a budget QUOTA_EXCEEDED, each with the time to wait.
package quota

import (
	"context"

	"github.com/legate-mcp/legate/ratelimit"
)

// Gate applies the limits and budgets of one configuration.
type Gate struct {
	limiter *ratelimit.Limiter // nil: no limits
	budgets *Budgets           // nil: no budgets
}

// NewGate returns the gate of limiter and budgets, nil when both are.
func NewGate(limiter *ratelimit.Limiter, budgets *Budgets) *Gate {
	if limiter == nil && budgets == nil {
		return nil
	}
	return &Gate{limiter: limiter, budgets: budgets}
}

// Call is what the gate knows of a call.
type Call struct {
	Tenant, Principal, Tool string
	// Write: the call is of class write or destructive.
	Write bool
	// Approved: an approved request's run, let through when it was made
	// and not limited or counted again (its result is charged).
	Approved bool
	// Counted: a call the budgets count already, or never (a later round
	// of a call, the gateway's own calls); it is rate limited all the same.
	Counted bool
}

// Ticket is what Admit took for a call; Done ends it.
type Ticket struct {
	turn   ratelimit.Turn
	charge Charge
}

// Admit lets c through, taking its turn from the rate limits and its share
// of the budgets, or refuses it having taken nothing. A nil Gate admits
// every call.
func (g *Gate) Admit(ctx context.Context, c Call) (Ticket, error) {
	var t Ticket
	if g == nil {
		return t, nil
	}
	if g.limiter != nil && !c.Approved {
		var err error
		if t.turn, err = g.limiter.Reserve(c.Principal, c.Tenant, c.Tool); err != nil {
			return Ticket{}, err
		}
	}
	var err error
	if t.charge, err = g.budgets.Admit(ctx, c.Tenant, c.Principal, c.Write, c.Approved || c.Counted); err != nil {
		t.turn.GiveBack()
		return Ticket{}, err
	}
	return t, nil
}

// Done ends the call t admitted: with back, it did not go on (the fast path
// handed it back, to be admitted again), and what t took is given back;
// else its result's size in bytes is charged to the budgets.
func (t Ticket) Done(ctx context.Context, size int64, back bool) {
	if back {
		t.turn.GiveBack()
	}
	t.charge.Done(ctx, size, back)
}
