package httpkit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/httpkit"
)

func TestLimiterNoLimit(t *testing.T) {
	l := httpkit.NewLimiter("svc", httpkit.RateLimit{})
	if l != nil {
		t.Fatalf("a zero rate_limit gives a limiter")
	}
	for range 1000 {
		if err := l.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

// The burst goes at once, then requests are spaced by the rate.
func TestLimiterWaits(t *testing.T) {
	l := httpkit.NewLimiter("svc", httpkit.RateLimit{PerSecond: 20, Burst: 3})
	start := time.Now()
	for range 3 {
		if err := l.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > 20*time.Millisecond {
		t.Errorf("the burst took %v", d)
	}
	for range 2 {
		if err := l.Wait(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d < 90*time.Millisecond {
		t.Errorf("two requests past the burst at 20/s took %v; want about 100ms", d)
	}
}

// A turn that comes after the call's deadline is refused at once with
// RATE_LIMITED and the wait, and is not taken from later calls.
func TestLimiterPastTheDeadline(t *testing.T) {
	l := httpkit.NewLimiter("svc", httpkit.RateLimit{PerSecond: 1})
	if err := l.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := l.Wait(ctx)
	var e *legate.Error
	if !errors.As(err, &e) || e.Code != legate.CodeRateLimited {
		t.Fatalf("err %v; want RATE_LIMITED", err)
	}
	if e.RetryAfter < 800*time.Millisecond || e.RetryAfter > time.Second {
		t.Errorf("RetryAfter %v; want about 1s", e.RetryAfter)
	}
	if !strings.HasPrefix(e.Message, "svc: rate_limit") {
		t.Errorf("message %q", e.Message)
	}
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Errorf("refused after %v; want at once", d)
	}
	// The refused turn was given back: the next one is still about a
	// second after the first, not two.
	ctx2, cancel2 := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel2()
	if err := l.Wait(ctx2); err != nil {
		t.Errorf("next turn: %v", err)
	}
}

func TestLimiterCancelled(t *testing.T) {
	l := httpkit.NewLimiter("svc", httpkit.RateLimit{PerSecond: 0.1})
	l.Wait(t.Context())
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(30*time.Millisecond, cancel)
	if err := l.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v; want cancelled", err)
	}
}

func TestRateLimitValidate(t *testing.T) {
	tests := map[string]struct {
		r      httpkit.RateLimit
		fields []string
	}{
		"zero":     {httpkit.RateLimit{}, nil},
		"set":      {httpkit.RateLimit{PerSecond: 2.5, Burst: 4}, nil},
		"negative": {httpkit.RateLimit{PerSecond: -1, Burst: -2}, []string{"rate_limit.per_second", "rate_limit.burst"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			errs := tc.r.Validate("rate_limit")
			if len(errs) != len(tc.fields) {
				t.Fatalf("errors %v; want on %v", errs, tc.fields)
			}
			for i, err := range errs {
				var fe *legate.FieldError
				if !errors.As(err, &fe) || fe.Field != tc.fields[i] {
					t.Errorf("error %v; want on %s", err, tc.fields[i])
				}
			}
		})
	}
}
