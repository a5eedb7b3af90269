package instances

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/circuit"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/vault"
)

// Breaker configures the circuit breaker of every instance: zero fields
// are circuit.DefaultFailures and circuit.DefaultCooldown, as upstreams
// have them.
type Breaker struct {
	Failures int
	Cooldown time.Duration
	Log      *slog.Logger
}

// Health is what the gateway knows of a running instance beyond its
// definition: its circuit breaker, the last failure it counted, and what
// its last connection test found. It lives as long as the instance's
// connector: a reload that keeps one keeps its health.
type Health struct {
	id       string
	masks    *vault.Masks // the secrets its failures' texts must not show
	cooldown time.Duration
	breaker  *gobreaker.CircuitBreaker[*legate.Result]

	mu     sync.Mutex
	failed failure
	tested *Tested
}

// failure is a provider failure the breaker counted.
type failure struct {
	text string
	at   time.Time
}

// Tested is the outcome of an instance's last connection test.
type Tested struct {
	OK    bool
	Error string
	At    time.Time
	Facts connectors.Facts
}

// State is a snapshot of an instance's Health.
type State struct {
	// Circuit is closed, half-open or open.
	Circuit string
	// Failures counts the provider failures in a row the breaker holds
	// (reset by a success and when the circuit changes state).
	Failures int
	// LastFailure is the last provider failure counted, and when.
	LastFailure   string
	LastFailureAt time.Time
	// RetryAt, while the circuit is open, is when it lets a trial call
	// through.
	RetryAt time.Time
	// Test is the last connection test, nil before the first.
	Test *Tested
}

func newHealth(id string, b Breaker, masks *vault.Masks) *Health {
	h := &Health{id: id, masks: masks, cooldown: b.Cooldown}
	if h.cooldown <= 0 {
		h.cooldown = circuit.DefaultCooldown
	}
	log := b.Log
	if log != nil {
		log = log.With("connector", id)
	}
	h.breaker = circuit.New[*legate.Result](circuit.Settings{
		Name: id, Failures: b.Failures, Cooldown: h.cooldown, Log: log,
		Healthy: func(err error) bool { return !ProviderFailure(err) },
		Failed: func(err error) {
			h.mu.Lock()
			h.failed = failure{text: h.masks.Secrets().MaskString(err.Error()), at: time.Now()}
			h.mu.Unlock()
		},
	})
	return h
}

// ProviderFailure reports whether a native call's error says the
// provider is failing: a 5xx answer, a network error, a timeout
// (TRANSIENT, TIMEOUT, UPSTREAM_UNAVAILABLE, or an error with no code).
// A provider's answer (invalid arguments, not found, permission, auth,
// conflict, a rate limit with its Retry-After), a missing connection or
// configuration, and the caller's own cancellation are not.
func ProviderFailure(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	switch legate.CodeOf(err) {
	case legate.CodeTransient, legate.CodeTimeout, legate.CodeUpstreamUnavailable:
		return true
	}
	return false
}

// canceled is a call's error when its caller went away: whatever the
// connector made of it, it says nothing of the provider.
type canceled struct{ error }

func (c canceled) Unwrap() error        { return c.error }
func (c canceled) Is(target error) bool { return target == context.Canceled }

// run runs call through the breaker: while the circuit is open it fails
// at once with UPSTREAM_UNAVAILABLE, saying when a call is let through.
func (h *Health) run(ctx context.Context, call func() (*legate.Result, error)) (*legate.Result, error) {
	res, err := h.breaker.Execute(func() (*legate.Result, error) {
		res, err := call()
		if err != nil && errors.Is(ctx.Err(), context.Canceled) {
			err = canceled{err}
		}
		return res, err
	})
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		return nil, h.open(err)
	}
	var c canceled
	if errors.As(err, &c) {
		return res, c.error
	}
	return res, err
}

// open is the error of a call refused by an open circuit.
func (h *Health) open(err error) error {
	s := h.State()
	msg := fmt.Sprintf("connector %s is unavailable: its circuit is open after repeated provider failures", h.id)
	details := map[string]any{"circuit": s.Circuit}
	if !s.RetryAt.IsZero() {
		wait := max(time.Until(s.RetryAt).Round(time.Second), 0)
		msg += fmt.Sprintf("; a call is let through again at %s (in %s)", s.RetryAt.UTC().Format(time.RFC3339), wait)
		details["retry_at"] = s.RetryAt.UTC().Format(time.RFC3339)
	} else {
		msg += "; a trial call is under way, retry shortly"
	}
	return &legate.Error{Code: legate.CodeUpstreamUnavailable, Message: msg, Details: details, Err: err}
}

// test records the outcome of a connection test.
func (h *Health) test(err error, f connectors.Facts) {
	t := &Tested{OK: err == nil, At: time.Now().UTC(), Facts: f}
	if err != nil {
		t.Error = h.masks.Secrets().MaskString(err.Error())
	}
	h.mu.Lock()
	h.tested = t
	h.mu.Unlock()
}

// State returns the health as it is now.
func (h *Health) State() State {
	st := h.breaker.State()
	h.mu.Lock()
	defer h.mu.Unlock()
	s := State{Circuit: st.String(), Failures: int(h.breaker.Counts().ConsecutiveFailures), LastFailure: h.failed.text, LastFailureAt: h.failed.at, Test: h.tested}
	if st == gobreaker.StateOpen && !h.failed.at.IsZero() {
		s.RetryAt = h.failed.at.Add(h.cooldown) // the circuit opened on its last failure
	}
	return s
}
