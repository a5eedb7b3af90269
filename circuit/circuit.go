// Package circuit is the circuit breaker a provider that keeps failing
// opens, so that calls to it fail fast until a cool-down has passed and
// one trial call succeeds: an upstream MCP server's, and the reading of
// which failures say something of a provider's health.
package circuit

import (
	"log/slog"
	"time"

	"github.com/sony/gobreaker/v2"
)

// The defaults of Settings' Failures and Cooldown, for upstreams and
// native connectors alike.
const (
	DefaultFailures = 5
	DefaultCooldown = 15 * time.Second
)

// Settings are a breaker's.
type Settings struct {
	// Name names the provider; Log, which should say it too, is told
	// when the circuit opens and closes.
	Name string
	// Failures in a row open the circuit; Cooldown later one trial call
	// is let through, and closes it again if it succeeds.
	Failures int
	Cooldown time.Duration
	// Healthy reports whether a call's error says nothing against the
	// provider's health (an answer, a caller's cancellation): it is not
	// counted. Failed, when set, is told of each failure counted.
	Healthy func(error) bool
	Failed  func(error)
	Log     *slog.Logger
}

// New returns a breaker for calls whose results are T.
func New[T any](s Settings) *gobreaker.CircuitBreaker[T] {
	if s.Failures <= 0 {
		s.Failures = DefaultFailures
	}
	if s.Cooldown <= 0 {
		s.Cooldown = DefaultCooldown
	}
	return gobreaker.NewCircuitBreaker[T](gobreaker.Settings{
		Name:        s.Name,
		MaxRequests: 1,
		Timeout:     s.Cooldown,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= uint32(s.Failures) },
		IsSuccessful: func(err error) bool {
			ok := err == nil || s.Healthy != nil && s.Healthy(err)
			if !ok && s.Failed != nil {
				s.Failed(err)
			}
			return ok
		},
		OnStateChange: func(name string, from, to gobreaker.State) {
			if s.Log != nil {
				s.Log.Warn("circuit changed", "from", from.String(), "to", to.String())
			}
		},
	})
}
