package server

import (
	"context"
	"fmt"
	pathpkg "path"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
)

// limiter is the rate limit step of the call path (limits: in the
// config). It keeps a token bucket per principal and per tool in a
// bounded cache, so principals arriving without end (JWT subjects) cannot
// grow memory: a bucket dropped from the cache starts again full.
type limiter struct {
	cfg     config.Limits
	buckets *lru.Cache[string, *rate.Limiter]
	now     func() time.Time
}

// newLimiter returns the step of cfg, or nil when it sets no limit.
func newLimiter(cfg config.Limits) *limiter {
	if !cfg.On() {
		return nil
	}
	// lru.New fails only for a size below 1.
	buckets, _ := lru.New[string, *rate.Limiter](max(cfg.CacheSize, 1))
	return &limiter{cfg: cfg, buckets: buckets, now: time.Now}
}

// limit is the step: a call over a limit fails at once with RATE_LIMITED
// and the time until it would be let through as RetryAfter, without taking
// the other limit's turn. It stands after observe, so refused calls are
// audited and counted, and before decide, so they are neither held for
// approval nor run. A nil limiter adds no step. A request already approved
// was let through when it was made and is not limited again.
func (l *limiter) limit(next Handler) Handler {
	if l == nil {
		return next
	}
	return func(ctx context.Context, r *Request) (*mcp.CallToolResult, error) {
		if r.approved != nil {
			return next(ctx, r)
		}
		if err := l.take(r.Caller.Principal, r.Caller.Tenant, r.Entry.Canonical); err != nil {
			return nil, err
		}
		return next(ctx, r)
	}
}

// take takes one call's turn from the principal's and the tool's buckets,
// or from neither when either has none free.
func (l *limiter) take(principal, tenant, tool string) error {
	now := l.now()
	toolRate, toolWhat := l.cfg.PerTool, "per_tool"
	for i, t := range l.cfg.Tools {
		if ok, _ := pathpkg.Match(t.Match, tool); ok {
			toolRate, toolWhat = t.Rate(), fmt.Sprintf("tools[%d] (%s)", i, t.Match)
			break
		}
	}
	var taken []*rate.Reservation
	var err *legate.Error
	for _, b := range []struct {
		key, what string
		rate      config.Rate
	}{
		{"p\x00" + tenant + "\x00" + principal, fmt.Sprintf("the limit per_principal of %s", principal), l.cfg.PerPrincipal},
		{"t\x00" + tool, fmt.Sprintf("the limit %s of %s", toolWhat, tool), toolRate},
	} {
		if b.rate.PerSecond <= 0 {
			continue
		}
		res := l.bucket(b.key, b.rate).ReserveN(now, 1)
		if d := res.DelayFrom(now); d > 0 {
			res.CancelAt(now)
			if err == nil || d > err.RetryAfter {
				err = &legate.Error{Code: legate.CodeRateLimited, RetryAfter: d,
					Message: fmt.Sprintf("%s (%g calls per second, burst %d) is reached", b.what, b.rate.PerSecond, max(b.rate.Burst, 1))}
			}
			continue
		}
		taken = append(taken, res)
	}
	if err != nil {
		for _, res := range taken {
			res.CancelAt(now)
		}
		return err
	}
	return nil
}

// bucket returns key's bucket, made at rate r if it has none.
func (l *limiter) bucket(key string, r config.Rate) *rate.Limiter {
	if b, ok := l.buckets.Get(key); ok {
		return b
	}
	b := rate.NewLimiter(rate.Limit(r.PerSecond), max(r.Burst, 1))
	if prev, ok, _ := l.buckets.PeekOrAdd(key, b); ok {
		return prev
	}
	return b
}
