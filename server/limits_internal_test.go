package server

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/store"
)

// With no limit set there is no step: the chain holds the next handler
// itself.
func TestNoLimitsNoStep(t *testing.T) {
	next := Handler(func(context.Context, *Request) (*mcp.CallToolResult, error) { return nil, nil })
	for name, cfg := range map[string]config.Limits{
		"empty":       {},
		"zero rates":  {PerPrincipal: config.Rate{Burst: 5}, Tools: []config.ToolLimit{{Match: "*", Burst: 3}}, CacheSize: 10},
		"default doc": config.Default().Limits,
	} {
		l := newLimiter(cfg)
		if l != nil {
			t.Errorf("%s: a limiter", name)
		}
		if reflect.ValueOf(l.limit(next)).Pointer() != reflect.ValueOf(next).Pointer() {
			t.Errorf("%s: a step in the chain", name)
		}
	}
}

// A refusal takes no turn from the other limit, and tells when to come
// back: after that long the call goes through. A request already
// approved is not limited again.
func TestLimiterTurns(t *testing.T) {
	l := newLimiter(config.Limits{PerPrincipal: config.Rate{PerSecond: 1, Burst: 2}, PerTool: config.Rate{PerSecond: 0.5, Burst: 1}, CacheSize: 10})
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	if err := l.take("alice", "", "a"); err != nil {
		t.Fatal(err)
	}
	err := l.take("alice", "", "a")
	var ce *legate.Error
	if !errors.As(err, &ce) || ce.Code != legate.CodeRateLimited || ce.RetryAfter != 2*time.Second {
		t.Fatalf("the tool's second call: %v", err)
	}
	// alice's second turn was given back: one call to another tool goes.
	if err := l.take("alice", "", "b"); err != nil {
		t.Fatalf("alice's turn was taken by the refused call: %v", err)
	}
	if err := l.take("alice", "", "c"); err == nil || legate.CodeOf(err) != legate.CodeRateLimited {
		t.Fatalf("alice's third call: %v", err)
	}
	// The same principal name in another tenant has its own bucket.
	if err := l.take("alice", "t2", "d"); err != nil {
		t.Fatalf("alice of t2: %v", err)
	}
	now = now.Add(ce.RetryAfter)
	if err := l.take("alice", "", "a"); err != nil {
		t.Fatalf("after retry_after: %v", err)
	}

	ran := 0
	h := l.limit(func(context.Context, *Request) (*mcp.CallToolResult, error) { ran++; return nil, nil })
	r := &Request{Entry: &catalog.Entry{Canonical: "a"}, Caller: connectors.Caller{Principal: "alice"}}
	if _, err := h(context.Background(), r); legate.CodeOf(err) != legate.CodeRateLimited || ran != 0 {
		t.Fatalf("over the limit: %v, ran %d", err, ran)
	}
	r.approved = &store.Approval{ID: "x"}
	if _, err := h(context.Background(), r); err != nil || ran != 1 {
		t.Fatalf("an approved request: %v, ran %d", err, ran)
	}
}

// The buckets are bounded: principals beyond cache_size evict the least
// recently used.
func TestLimiterBounded(t *testing.T) {
	l := newLimiter(config.Limits{PerPrincipal: config.Rate{PerSecond: 1}, CacheSize: 100})
	for i := range 10000 {
		l.take(string(rune('a'+i%26))+time.Duration(i).String(), "", "x")
	}
	if n := l.buckets.Len(); n != 100 {
		t.Fatalf("%d buckets kept", n)
	}
}
