package httpkit

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/time/rate"

	"github.com/legate-mcp/legate"
)

// RateLimit is the rate limit of one connector instance. A connector's
// Config holds it as one field, so that every type spells it the same:
//
//	RateLimit httpkit.RateLimit `yaml:"rate_limit" desc:"Requests per second this instance sends at most (per_second, 0 for no limit) and how many may go at once (burst)"`
//
// and a config file sets `rate_limit: {per_second: 5, burst: 10}`.
type RateLimit struct {
	// PerSecond is the average rate allowed; zero means no limit.
	PerSecond float64 `yaml:"per_second" desc:"Requests per second the instance sends at most, on average; 0 means no limit"`
	// Burst is how many requests may go at once; zero means 1.
	Burst int `yaml:"burst" desc:"Requests that may be sent at once before the rate applies; 0 means 1"`
}

// Validate checks r, a field named field of the connector's config.
func (r RateLimit) Validate(field string) []error {
	var errs []error
	if r.PerSecond < 0 {
		errs = append(errs, legate.Invalid(field+".per_second", "must not be negative, got %g", r.PerSecond))
	}
	if r.Burst < 0 {
		errs = append(errs, legate.Invalid(field+".burst", "must not be negative, got %d", r.Burst))
	}
	return errs
}

// Limiter holds an instance's requests to its rate limit. A nil *Limiter
// does not limit.
type Limiter struct {
	name string
	r    RateLimit
	lim  *rate.Limiter
}

// NewLimiter returns the limiter of r, or nil when r sets no limit; name
// (the connector type) starts its errors.
func NewLimiter(name string, r RateLimit) *Limiter {
	if r.PerSecond <= 0 {
		return nil
	}
	r.Burst = max(r.Burst, 1)
	return &Limiter{name: name, r: r, lim: rate.NewLimiter(rate.Limit(r.PerSecond), r.Burst)}
}

// Wait takes one request's turn, waiting for it if needed. When the turn
// comes after the context's deadline, it waits for nothing and returns
// RATE_LIMITED with the wait as RetryAfter: the caller learns at once when
// to come back, and the turn stays free for others. Cancelled while
// waiting, it returns the context's error.
func (l *Limiter) Wait(ctx context.Context) error {
	if l == nil {
		return nil
	}
	res := l.lim.Reserve()
	delay := res.Delay()
	if delay == 0 {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < delay {
		res.Cancel()
		return &legate.Error{Code: legate.CodeRateLimited, RetryAfter: delay,
			Message: fmt.Sprintf("%s: rate_limit of %g requests per second (burst %d) reached", l.name, l.r.PerSecond, l.r.Burst)}
	}
	if err := sleep(ctx, delay); err != nil {
		res.Cancel()
		return err
	}
	return nil
}
