// Package quotastest is the part of the store suite (package storetest)
// that a QuotaStore passes: counts taken atomically within a limit, per key
// and window, never overflowing, given back, listed and pruned.
package quotastest

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/storetest/internal/suite"
)

// base and must are the suite's clock and check (package suite).
var (
	base = suite.Base
	must = suite.Must
)

// Run runs the suite against q, empty.
func Run(t *testing.T, q store.QuotaStore) {
	ctx := context.Background()
	hour := base.Truncate(time.Hour)
	take := func(key string, start time.Time, n, limit, wantCount int64, wantTaken bool) {
		t.Helper()
		count, taken, err := q.Take(ctx, key, start, n, limit)
		must(t, err)
		if count != wantCount || taken != wantTaken {
			t.Fatalf("take %d of %s (limit %d): %d, %v; want %d, %v", n, key, limit, count, taken, wantCount, wantTaken)
		}
	}
	take("calls/p/acme/alice", hour, 1, 3, 1, true)
	take("calls/p/acme/alice", hour, 2, 3, 3, true)
	take("calls/p/acme/alice", hour, 1, 3, 3, false)               // the limit holds
	take("calls/p/acme/alice", hour, 0, 3, 3, true)                // taking nothing at the limit is within it
	take("calls/p/acme/alice", hour, 0, 2, 3, false)               // nothing left below 3
	take("calls/p/acme/bob", hour, 1, 3, 1, true)                  // another key counts apart
	take("calls/p/acme/alice", hour.Add(time.Hour), 1, 3, 1, true) // so does another window
	take("calls/p/acme/carol", hour, 4, 3, 0, false)               // more than the limit at once: nothing made
	take("bytes/p/acme/alice", hour, math.MaxInt64-1, math.MaxInt64, math.MaxInt64-1, true)
	take("bytes/p/acme/alice", hour, 5, math.MaxInt64, math.MaxInt64-1, false) // never overflows
	take("calls/p/acme/bob", hour, 1, 3, 2, true)
	take("calls/p/acme/bob", hour, -1, math.MaxInt64, 1, true) // given back

	got, err := q.Counts(ctx, hour)
	must(t, err)
	want := []store.QuotaCount{
		{Key: "bytes/p/acme/alice", Start: hour, Count: math.MaxInt64 - 1},
		{Key: "calls/p/acme/alice", Start: hour, Count: 3},
		{Key: "calls/p/acme/alice", Start: hour.Add(time.Hour), Count: 1},
		{Key: "calls/p/acme/bob", Start: hour, Count: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("counts: %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Key != want[i].Key || !got[i].Start.Equal(want[i].Start) || got[i].Count != want[i].Count {
			t.Fatalf("counts[%d]: %+v, want %+v", i, got[i], want[i])
		}
	}
	if got, err := q.Counts(ctx, hour.Add(time.Hour)); err != nil || len(got) != 1 {
		t.Fatalf("counts since the next window: %+v, %v; want its one", got, err)
	}
	n, err := q.Prune(ctx, hour.Add(time.Hour))
	if err != nil || n != 3 {
		t.Fatalf("prune: %d, %v; want the 3 of the first window", n, err)
	}
	take("calls/p/acme/alice", hour, 1, 3, 1, true) // a pruned window starts again
}
