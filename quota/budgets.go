package quota

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/store"
)

// The budgets' kinds, as keys, errors and metrics name them.
const (
	Calls       = "calls"
	ResultBytes = "result_bytes"
	Writes      = "writes"
)

// The scopes a budget is kept for.
const (
	Principal = "principal"
	Tenant    = "tenant"
)

// Budgets applies the budgets of one configuration over a store's counts.
type Budgets struct {
	cfg     config.Budgets
	counts  store.QuotaStore
	refused func(scope, budget string) // told of each call refused
	now     func() time.Time
}

// NewBudgets returns the budgets of cfg counted in counts, each call
// refused told to refused (nil: to none), or nil when cfg sets none.
func NewBudgets(cfg config.Budgets, counts store.QuotaStore, refused func(scope, budget string)) *Budgets {
	if !cfg.On() {
		return nil
	}
	return &Budgets{cfg: cfg, counts: counts, refused: refused, now: time.Now}
}

// Charge is what Admit took for one call, which Done gives back or adds
// the call's result to.
type Charge struct {
	b                 *Budgets
	principal, tenant string
	at                time.Time
	taken             []taken
}

// taken is one count Admit added to.
type taken struct {
	key   string
	start time.Time
}

// Admit takes one call from the calls budgets of principal and tenant (and
// from their writes budgets, for a write), once their result bytes budgets
// are checked not spent: all of them or, on a QUOTA_EXCEEDED, none. A
// call counted already (an approved request's run, a later round) takes
// nothing, and is only charged its result. A store that fails refuses the
// call, rather than let it pass uncounted. Nil Budgets admit every call.
func (b *Budgets) Admit(ctx context.Context, tenant, principal string, write, counted bool) (Charge, error) {
	if b == nil {
		return Charge{}, nil
	}
	c := Charge{b: b, principal: principal, tenant: tenant, at: b.now()}
	if counted {
		return c, nil
	}
	for _, x := range c.budgets() {
		for _, k := range []struct {
			kind string
			a    config.Allowance
		}{{ResultBytes, x.budget.ResultBytes}, {Calls, x.budget.Calls}, {Writes, x.budget.Writes}} {
			if k.a.Limit <= 0 || k.kind == Writes && !write {
				continue
			}
			key, start := x.key(k.kind), c.start(k.a)
			// A bytes budget is checked, not taken: a call is let through
			// while any of it is left (its count below the limit).
			n, limit := int64(1), k.a.Limit
			if k.kind == ResultBytes {
				n, limit = 0, limit-1
			}
			used, ok, err := b.counts.Take(ctx, key, start, n, limit)
			if err == nil && ok {
				if n > 0 {
					c.taken = append(c.taken, taken{key, start})
				}
				continue
			}
			c.Done(ctx, 0, true)
			if err != nil {
				return Charge{}, &legate.Error{Code: legate.CodeTransient, Message: "the budgets could not be counted; try again", Err: err}
			}
			return Charge{}, b.exceeded(x, k.kind, k.a, used, start, c.at)
		}
	}
	return c, nil
}

// Done ends the call Admit let through: it gives back what Admit took
// when the call did not go on (to be admitted again), else charges its
// result's n bytes to the result bytes budgets, in the windows it was
// admitted in.
func (c Charge) Done(ctx context.Context, n int64, back bool) {
	if c.b == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if back {
		for _, t := range c.taken {
			c.b.counts.Take(ctx, t.key, t.start, -1, math.MaxInt64)
		}
		return
	}
	for _, x := range c.budgets() {
		if a := x.budget.ResultBytes; a.Limit > 0 && n > 0 {
			c.b.counts.Take(ctx, x.key(ResultBytes), c.start(a), n, math.MaxInt64)
		}
	}
}

// start is the start of the window of a that holds the call.
func (c Charge) start(a config.Allowance) time.Time {
	return c.at.UTC().Truncate(time.Duration(a.Window))
}

// scoped is one budget and whose it is: a principal of a tenant, or a
// tenant (principal "").
type scoped struct {
	scope, tenant, principal string
	budget                   config.Budget
}

// key names the count of kind: kind/scope/tenant[/principal], each part
// escaped.
func (s scoped) key(kind string) string {
	k := kind + "/" + s.scope + "/" + url.PathEscape(s.tenant)
	if s.scope == Principal {
		k += "/" + url.PathEscape(s.principal)
	}
	return k
}

// subject is how an error names whose the budget is.
func (s scoped) subject() string {
	switch {
	case s.scope == Principal:
		return s.principal
	case s.tenant == "":
		return "(no tenant)"
	}
	return s.tenant
}

// budgets are the call's principal's budget, then its tenant's.
func (c Charge) budgets() []scoped {
	return []scoped{
		{Principal, c.tenant, c.principal, c.b.cfg.PerPrincipal},
		{Tenant, c.tenant, "", c.b.cfg.PerTenant},
	}
}

// exceeded is the error of a call over the kind budget of x.
func (b *Budgets) exceeded(x scoped, kind string, a config.Allowance, used int64, start, now time.Time) *legate.Error {
	if b.refused != nil {
		b.refused(x.scope, kind)
	}
	w := time.Duration(a.Window)
	resets := start.Add(w)
	what := map[string]string{Calls: "calls", ResultBytes: "bytes of results", Writes: "write calls"}[kind]
	return &legate.Error{Code: legate.CodeQuotaExceeded, RetryAfter: resets.Sub(now),
		Message: fmt.Sprintf("the %s budget of %s %s is spent: %d of %d %s per %s; it resets at %s",
			kind, x.scope, x.subject(), used, a.Limit, what, w, resets.Format(time.RFC3339)),
		Details: map[string]any{"budget": kind, "scope": x.scope, "limit": a.Limit, "used": used, "window_seconds": w.Seconds(), "resets_at": resets.Format(time.RFC3339)}}
}

// Usage is one budget's count in its current window, against its limit.
type Usage struct {
	Scope     string    `json:"scope"`
	Tenant    string    `json:"tenant"`
	Principal string    `json:"principal,omitempty"`
	Budget    string    `json:"budget"`
	Used      int64     `json:"used"`
	Limit     int64     `json:"limit"`
	ResetsAt  time.Time `json:"resets_at"`
}

// Usage lists every budget counted in its current window, by key: what
// the panel and GET /admin/v1/budgets show. Nil Budgets have none.
func (b *Budgets) Usage(ctx context.Context) ([]Usage, error) {
	if b == nil {
		return nil, nil
	}
	now := b.now().UTC()
	counts, err := b.counts.Counts(ctx, now.Add(-config.MaxBudgetWindow))
	if err != nil {
		return nil, err
	}
	var out []Usage
	for _, c := range counts {
		kind, rest, _ := strings.Cut(c.Key, "/")
		scope, rest, _ := strings.Cut(rest, "/")
		tenant, principal, _ := strings.Cut(rest, "/")
		x := b.cfg.PerTenant
		if scope == Principal {
			x = b.cfg.PerPrincipal
		}
		a := map[string]config.Allowance{Calls: x.Calls, ResultBytes: x.ResultBytes, Writes: x.Writes}[kind]
		if a.Limit <= 0 || !c.Start.Equal(now.Truncate(time.Duration(a.Window))) {
			continue // a budget no longer set, or a window past
		}
		u := Usage{Scope: scope, Budget: kind, Used: c.Count, Limit: a.Limit, ResetsAt: c.Start.Add(time.Duration(a.Window))}
		u.Tenant, _ = url.PathUnescape(tenant)
		u.Principal, _ = url.PathUnescape(principal)
		out = append(out, u)
	}
	return out, nil
}
