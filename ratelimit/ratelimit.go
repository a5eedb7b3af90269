// Package ratelimit holds the gateway's rate limits (limits: in the
// config): a token bucket per principal (of a tenant) and per tool, kept
// in a bounded cache so that principals arriving without end (JWT
// subjects) cannot grow memory; a bucket dropped from the cache starts
// again full. The call path's limit step asks Take for each call.
package ratelimit

import (
	"fmt"
	pathpkg "path"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
)

// Limiter applies the limits of one configuration.
type Limiter struct {
	cfg     config.Limits
	buckets *lru.Cache[string, *rate.Limiter]
	now     func() time.Time
}

// New returns the limiter of cfg, or nil when it sets no limit.
func New(cfg config.Limits) *Limiter {
	if !cfg.On() {
		return nil
	}
	// lru.New fails only for a size below 1.
	buckets, _ := lru.New[string, *rate.Limiter](max(cfg.CacheSize, 1))
	return &Limiter{cfg: cfg, buckets: buckets, now: time.Now}
}

// Take takes one call's turn from the principal's and the tool's buckets,
// or from neither when either has none free.
func (l *Limiter) Take(principal, tenant, tool string) error {
	_, err := l.Reserve(principal, tenant, tool)
	return err
}

// Turn is the turn Reserve took from the buckets, and when.
type Turn struct {
	at    time.Time
	taken []*rate.Reservation
}

// GiveBack returns the turn to its buckets, less what calls after it took:
// for a call that did not go on, and will be taken again.
func (t Turn) GiveBack() {
	for _, res := range t.taken {
		res.CancelAt(t.at)
	}
}

// Reserve is Take, returning the turn it took.
func (l *Limiter) Reserve(principal, tenant, tool string) (Turn, error) {
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
		return Turn{}, err
	}
	return Turn{at: now, taken: taken}, nil
}

// bucket returns key's bucket, made at rate r if it has none.
func (l *Limiter) bucket(key string, r config.Rate) *rate.Limiter {
	if b, ok := l.buckets.Get(key); ok {
		return b
	}
	b := rate.NewLimiter(rate.Limit(r.PerSecond), max(r.Burst, 1))
	if prev, ok, _ := l.buckets.PeekOrAdd(key, b); ok {
		return prev
	}
	return b
}
