package server

import (
	"context"

	"github.com/legate-mcp/legate/ratelimit"
)

// limitStep is the rate limit step of the call path: a call over a limit
// fails at once with RATE_LIMITED and the time until it would be let
// through as RetryAfter. It stands after observe, so refused calls are
// audited and counted, and before decide, so they are neither held for
// approval nor run; a call the fast path hands back for approval gives its
// turn back, which the SDK's run of it takes. A nil limiter (no limits: set) adds no step. A request
// already approved was let through when it was made and is not limited
// again.
func limitStep(limiter func() *ratelimit.Limiter) func(Handler) Handler {
	return func(next Handler) Handler {
		return func(ctx context.Context, r *Request) (*Result, error) {
			l := limiter()
			if l == nil || r.approved != nil {
				return next(ctx, r)
			}
			turn, err := l.Reserve(r.Caller.Principal, r.Caller.Tenant, r.Entry.Canonical)
			if err != nil {
				return nil, err
			}
			res, err := next(ctx, r)
			if err == errHandBack {
				turn.GiveBack()
			}
			return res, err
		}
	}
}
