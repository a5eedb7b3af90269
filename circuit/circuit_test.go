package circuit_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sony/gobreaker/v2"

	"github.com/legate-mcp/legate/circuit"
)

func TestOpensOnCountedFailuresOnly(t *testing.T) {
	answered := errors.New("an answer")
	down := errors.New("connection refused")
	var failed []error
	b := circuit.New[int](circuit.Settings{
		Name: "p", Failures: 2, Cooldown: time.Hour,
		Healthy: func(err error) bool { return errors.Is(err, answered) },
		Failed:  func(err error) { failed = append(failed, err) },
	})
	call := func(err error) error {
		_, e := b.Execute(func() (int, error) { return 0, err })
		return e
	}
	for range 5 {
		call(answered)
	}
	call(down)
	if b.State() != gobreaker.StateClosed {
		t.Fatalf("open after answers and one failure: %v", b.State())
	}
	call(down)
	if b.State() != gobreaker.StateOpen {
		t.Fatalf("closed after two failures in a row: %v", b.State())
	}
	if err := call(nil); !errors.Is(err, gobreaker.ErrOpenState) {
		t.Fatalf("an open circuit let a call through: %v", err)
	}
	if len(failed) != 2 {
		t.Fatalf("failures reported: %v", failed)
	}
}

// Settings left zero are the defaults upstreams and native connectors
// share: DefaultFailures failures in a row open the circuit.
func TestZeroSettingsAreTheDefaults(t *testing.T) {
	b := circuit.New[int](circuit.Settings{Name: "p"})
	for i := range circuit.DefaultFailures {
		if b.State() != gobreaker.StateClosed {
			t.Fatalf("open after %d failures", i)
		}
		b.Execute(func() (int, error) { return 0, errors.New("down") })
	}
	if b.State() != gobreaker.StateOpen {
		t.Fatalf("closed after %d failures: %v", circuit.DefaultFailures, b.State())
	}
}
