package server

import (
	"context"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/quota"
	"github.com/legate-mcp/legate/ratelimit"
	"github.com/legate-mcp/legate/store"
)

// With no limit set (a nil gate: the configuration sets none, or a
// reload removed them), every call runs.
func TestNoLimitsEveryCallRuns(t *testing.T) {
	ran := 0
	h := limitStep{gate: fixed(ratelimit.New(config.Limits{}))}.wrap(func(context.Context, *Request) (*Result, error) { ran++; return nil, nil })
	r := &Request{Entry: &catalog.Entry{Canonical: "a"}, Caller: connectors.Caller{Principal: "alice"}}
	for range 100 {
		if _, err := h(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if ran != 100 {
		t.Fatalf("ran %d of 100", ran)
	}
}

// fixed is the gate of limiter l alone, which no reload changes.
func fixed(l *ratelimit.Limiter) func() *quota.Gate {
	g := quota.NewGate(l, nil)
	return func() *quota.Gate { return g }
}

// A call over a limit is refused before it runs; a request already
// approved is not limited again.
func TestLimitStep(t *testing.T) {
	l := ratelimit.New(config.Limits{PerPrincipal: config.Rate{PerSecond: 0.001, Burst: 1}, CacheSize: 10})
	ran := 0
	h := limitStep{gate: fixed(l)}.wrap(func(context.Context, *Request) (*Result, error) { ran++; return nil, nil })
	r := &Request{Entry: &catalog.Entry{Canonical: "a"}, Caller: connectors.Caller{Principal: "alice"}}
	if _, err := h(context.Background(), r); err != nil || ran != 1 {
		t.Fatalf("the first call: %v, ran %d", err, ran)
	}
	if _, err := h(context.Background(), r); legate.CodeOf(err) != legate.CodeRateLimited || ran != 1 {
		t.Fatalf("over the limit: %v, ran %d", err, ran)
	}
	r.approved = &store.Approval{ID: "x"}
	if _, err := h(context.Background(), r); err != nil || ran != 2 {
		t.Fatalf("an approved request: %v, ran %d", err, ran)
	}
}

// A call the fast path hands back for approval gives its turn back: the
// SDK's run of it takes one, so the call costs one in all.
func TestLimitStepHandBack(t *testing.T) {
	l := ratelimit.New(config.Limits{PerPrincipal: config.Rate{PerSecond: 0.001, Burst: 1}, CacheSize: 10})
	back := limitStep{gate: fixed(l)}.wrap(func(context.Context, *Request) (*Result, error) { return nil, errHandBack })
	r := &Request{Entry: &catalog.Entry{Canonical: "a"}, Caller: connectors.Caller{Principal: "alice"}}
	if _, err := back(context.Background(), r); err != errHandBack {
		t.Fatalf("handed back: %v", err)
	}
	if err := l.Take("alice", "", "a"); err != nil {
		t.Fatalf("the SDK's run of the call: %v", err)
	}
	if err := l.Take("alice", "", "a"); legate.CodeOf(err) != legate.CodeRateLimited {
		t.Fatalf("a second call: %v", err)
	}
}
