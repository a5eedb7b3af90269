package ratelimit

import (
	"errors"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
)

// With no limit set there is no limiter.
func TestNoLimitsNoLimiter(t *testing.T) {
	for name, cfg := range map[string]config.Limits{
		"empty":       {},
		"zero rates":  {PerPrincipal: config.Rate{Burst: 5}, Tools: []config.ToolLimit{{Match: "*", Burst: 3}}, CacheSize: 10},
		"default doc": config.Default().Limits,
	} {
		if l := New(cfg); l != nil {
			t.Errorf("%s: a limiter", name)
		}
	}
}

// A refusal takes no turn from the other limit, and tells when to come
// back: after that long the call goes through.
func TestLimiterTurns(t *testing.T) {
	l := New(config.Limits{PerPrincipal: config.Rate{PerSecond: 1, Burst: 2}, PerTool: config.Rate{PerSecond: 0.5, Burst: 1}, CacheSize: 10})
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	if err := l.Take("alice", "", "a"); err != nil {
		t.Fatal(err)
	}
	err := l.Take("alice", "", "a")
	var ce *legate.Error
	if !errors.As(err, &ce) || ce.Code != legate.CodeRateLimited || ce.RetryAfter != 2*time.Second {
		t.Fatalf("the tool's second call: %v", err)
	}
	// alice's second turn was given back: one call to another tool goes.
	if err := l.Take("alice", "", "b"); err != nil {
		t.Fatalf("alice's turn was taken by the refused call: %v", err)
	}
	if err := l.Take("alice", "", "c"); err == nil || legate.CodeOf(err) != legate.CodeRateLimited {
		t.Fatalf("alice's third call: %v", err)
	}
	// The same principal name in another tenant has its own bucket.
	if err := l.Take("alice", "t2", "d"); err != nil {
		t.Fatalf("alice of t2: %v", err)
	}
	now = now.Add(ce.RetryAfter)
	if err := l.Take("alice", "", "a"); err != nil {
		t.Fatalf("after retry_after: %v", err)
	}
}

// The buckets are bounded: principals beyond cache_size evict the least
// recently used.
func TestLimiterBounded(t *testing.T) {
	l := New(config.Limits{PerPrincipal: config.Rate{PerSecond: 1}, CacheSize: 100})
	for i := range 10000 {
		l.Take(string(rune('a'+i%26))+time.Duration(i).String(), "", "x")
	}
	if n := l.buckets.Len(); n != 100 {
		t.Fatalf("%d buckets kept", n)
	}
}
