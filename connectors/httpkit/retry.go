package httpkit

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/legate-mcp/legate/connectors/netguard"
)

// Defaults of a [Retry] whose fields are zero.
const (
	DefaultBase      = 500 * time.Millisecond
	DefaultMaxWait   = 30 * time.Second
	DefaultKeyHeader = "Idempotency-Key"
)

// Retry says how often and how long one request is sent again. The zero
// value sends it once.
//
// A request is sent again only when it cannot do its work twice, the rule
// of database/sql's ErrBadConn: its method is idempotent (GET, HEAD,
// OPTIONS, TRACE, PUT, DELETE), or it carries an idempotency key the
// server dedupes on, or the failure proves the server did none of the
// work — the connection was never made, or the answer is 408, 425 or 429.
// A POST that may have reached the server is never sent twice.
type Retry struct {
	// MaxAttempts bounds the attempts, the first included; below 1 means 1.
	MaxAttempts int
	// MaxElapsed bounds the time from the first attempt to the start of the
	// last; zero leaves only the context's deadline.
	MaxElapsed time.Duration
	// Base is the first backoff, doubled at each retry; DefaultBase if zero.
	Base time.Duration
	// MaxWait caps one wait; DefaultMaxWait if zero. A Retry-After longer
	// than it ends the retries: the caller hands the wait to its own caller
	// rather than holding the call.
	MaxWait time.Duration
	// KeyHeader names the idempotency key's header; DefaultKeyHeader if
	// empty. A request that carries it is sent again whatever its method.
	KeyHeader string
	// Limiter, when set, holds every attempt, the first included, to the
	// instance's rate limit; a turn past the context's deadline ends Do
	// with its RATE_LIMITED error.
	Limiter *Limiter
	// OnRetry, when set, is told of each retry with a short reason: the
	// status ("503") or "network". Connectors pass connectors.Call.Retry.
	OnRetry func(reason string)
}

// Do sends the request that newRequest builds, once per attempt (so that a
// body is read afresh and a signature is made at sending time), until an
// answer or a failure not worth another attempt, the attempts or the time
// run out, or the next wait would pass the context's deadline. Between
// attempts it waits the answer's Retry-After or else an exponential
// backoff with jitter.
//
// It returns the last answer, its body unread (the caller reads it and
// calls [Drain]), or the last error, which [TransportError] maps; attempts
// is how many requests were sent. Cancelled while waiting, it returns the
// context's error.
func (p *Retry) Do(ctx context.Context, client *http.Client, newRequest func(context.Context) (*http.Request, error)) (resp *http.Response, attempts int, err error) {
	start := time.Now()
	for attempts = 1; ; attempts++ {
		if err := p.Limiter.Wait(ctx); err != nil {
			return nil, attempts - 1, err
		}
		req, err := newRequest(ctx)
		if err != nil {
			return nil, attempts - 1, err
		}
		resp, err := client.Do(req)
		wait, again := p.next(ctx, req, resp, err, attempts, start)
		if !again {
			return resp, attempts, err
		}
		reason := "network"
		if resp != nil {
			reason = strconv.Itoa(resp.StatusCode)
			Drain(resp)
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, attempts, err
		}
		if p.OnRetry != nil {
			p.OnRetry(reason)
		}
	}
}

// next decides whether the outcome of attempt is worth another one, and
// how long to wait first.
func (p *Retry) next(ctx context.Context, req *http.Request, resp *http.Response, err error, attempt int, start time.Time) (time.Duration, bool) {
	if attempt >= p.MaxAttempts || ctx.Err() != nil {
		return 0, false
	}
	wait := p.Backoff(attempt)
	if err != nil {
		var dns *net.DNSError
		if errors.Is(err, netguard.ErrBlocked) || errors.Is(err, netguard.ErrTooManyRedirects) ||
			errors.As(err, &dns) && dns.IsNotFound || // a name that does not exist will not
			(!p.repeatable(req) && !notSent(err)) {
			return 0, false
		}
	} else {
		if !RetryableStatus(resp.StatusCode) || (!p.repeatable(req) && !unprocessed(resp.StatusCode)) {
			return 0, false
		}
		if ra, ok := netguard.RetryAfter(resp.Header, time.Now()); ok {
			if ra > p.maxWait() {
				return 0, false
			}
			wait = ra
		}
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
		return 0, false
	}
	if p.MaxElapsed > 0 && time.Since(start)+wait > p.MaxElapsed {
		return 0, false
	}
	return wait, true
}

// Backoff is the wait after a failed attempt (1 for the first) when the
// answer gives no Retry-After: Base doubled per attempt, capped at
// MaxWait, with jitter over its upper half so that clients that failed
// together do not come back together.
func (p *Retry) Backoff(attempt int) time.Duration {
	base := p.Base
	if base <= 0 {
		base = DefaultBase
	}
	d := p.maxWait()
	if attempt < 1 {
		attempt = 1
	}
	if attempt < 32 && base<<(attempt-1) > 0 {
		d = min(base<<(attempt-1), d)
	}
	return d/2 + rand.N(d/2+1)
}

func (p *Retry) maxWait() time.Duration {
	if p.MaxWait > 0 {
		return p.MaxWait
	}
	return DefaultMaxWait
}

// repeatable reports whether req may do its work twice without harm.
func (p *Retry) repeatable(req *http.Request) bool {
	key := p.KeyHeader
	if key == "" {
		key = DefaultKeyHeader
	}
	if req.Header.Get(key) != "" {
		return true
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
