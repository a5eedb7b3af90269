package storetest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/storetest/eventstest"
	"github.com/legate-mcp/legate/store/storetest/kbtest"
)

// SharedOpener opens n stores on one empty database, as n processes (the
// replicas of a deployment) would; it closes them in t.Cleanup.
type SharedOpener func(t *testing.T, n int) []store.Store

// RunShared runs the suite of a backend that several processes share:
// what one store writes, the others read, and every compare-and-set holds
// across them as it does across goroutines.
func RunShared(t *testing.T, open SharedOpener) {
	for _, s := range []struct {
		name string
		run  func(*testing.T, []store.Store)
	}{
		{"claim races across stores", sharedClaimRace},
		{"open races across stores", sharedOpenRace},
		{"decided on one, seen by all", sharedDecide},
		{"operations race across stores", sharedOperations},
		{"audit from every writer, followed by id", sharedAudit},
		{"cache version seen by all", sharedCacheVersion},
		{"watch tells of another store's change", sharedWatch},
		{"budgets hold across stores", sharedQuotas},
		{"events stored once across stores", func(t *testing.T, sts []store.Store) { eventstest.Shared(t, sts[0].Events(), sts[1].Events()) }},
		{"knowledge-base documents written once across stores", func(t *testing.T, sts []store.Store) { kbtest.Shared(t, sts[0].KB(), sts[1].KB()) }},
	} {
		t.Run(s.name, func(t *testing.T) { s.run(t, open(t, 2)) })
	}
}

// Claimers on two stores race for one approved request: one wins.
func sharedClaimRace(t *testing.T, sts []store.Store) {
	ctx := context.Background()
	for round := range 5 {
		id := fmt.Sprint("ap_shared_", round)
		approved(t, sts[0].Approvals(), id)
		won := race(func(i int) bool {
			ok, err := sts[i%len(sts)].Approvals().Claim(ctx, id, base.Add(2*time.Minute))
			if err != nil {
				t.Error(err)
			}
			return ok
		})
		var winners []int
		for i, w := range won {
			if w {
				winners = append(winners, i)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: claimers %v won, want exactly one", round, winners)
		}
		stateIs(t, sts[1].Approvals(), id, store.StateExecuting)
	}
}

// Openers on two stores open one binding at once: one request.
func sharedOpenRace(t *testing.T, sts []store.Store) {
	openRace(t, func(i int) store.ApprovalStore { return sts[i%len(sts)].Approvals() })
}

func sharedDecide(t *testing.T, sts []store.Store) {
	ctx := context.Background()
	a, b := sts[0].Approvals(), sts[1].Approvals()
	create(t, a, request("ap_1", "bob", "", base))
	if _, err := b.Decide(ctx, "ap_1", true, "alice", "", base.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	stateIs(t, a, "ap_1", store.StateApproved)
	if _, err := a.Decide(ctx, "ap_1", false, "eve", "", base.Add(time.Minute)); err == nil {
		t.Fatal("a second decision through another store was accepted")
	}
	if n, err := b.CountPending(ctx); err != nil || n != 0 {
		t.Fatalf("pending: %d %v, want 0", n, err)
	}
}

func sharedOperations(t *testing.T, sts []store.Store) {
	got := race(func(i int) store.Operation {
		op, err := sts[i%len(sts)].Operations().Begin(context.Background(), "slack", "op-shared", base, time.Minute)
		if err != nil {
			t.Error(err)
		}
		return op
	})
	claims := 0
	for _, op := range got {
		if op.State == store.OpNew || op.State == store.OpRetry {
			claims++
		}
	}
	if claims != 1 {
		t.Fatalf("%d of %d racers on two stores claimed one key, want 1", claims, racers)
	}
}

// Writers on every store append batches while a reader follows the log by
// id, as legate audit tail -f does: it reads every row once, in id order,
// none skipped because a later id committed before an earlier one.
func sharedAudit(t *testing.T, sts []store.Store) {
	ctx := context.Background()
	const writers, batches, size = 8, 20, 5
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for b := range batches {
				rows := auditRows(size)
				for i := range rows {
					rows[i].Detail = fmt.Sprintf("w%d-b%d-r%d", w, b, i)
				}
				if err := sts[w%len(sts)].Audit().Append(ctx, rows); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	seen := map[string]int{}
	var last int64
	follow := func() int {
		rows, err := sts[len(sts)-1].Audit().Query(ctx, store.AuditQuery{AfterID: last})
		must(t, err)
		for _, r := range rows {
			if r.ID <= last {
				t.Fatalf("id %d after %d", r.ID, last)
			}
			last = r.ID
			seen[r.Detail]++
		}
		return len(rows)
	}
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		follow()
	}
	for follow() > 0 {
	}
	if len(seen) != writers*batches*size {
		t.Fatalf("the follower read %d distinct rows, want %d: rows committed behind its position were skipped", len(seen), writers*batches*size)
	}
	for d, n := range seen {
		if n != 1 {
			t.Fatalf("row %s read %d times", d, n)
		}
	}
	all, err := sts[0].Audit().Query(ctx, store.AuditQuery{Limit: 1000})
	must(t, err)
	if len(all) != len(seen) {
		t.Fatalf("the log holds %d rows, the follower read %d", len(all), len(seen))
	}
}

func sharedCacheVersion(t *testing.T, sts []store.Store) {
	ctx := context.Background()
	v := version(t, sts[1].Upstreams())
	must(t, sts[0].Upstreams().SaveCache(ctx, "a", []store.CachedTool{toolX}, nil, base, ""))
	if version(t, sts[1].Upstreams()) == v {
		t.Fatal("a refresh through one store leaves the version another reads as it was")
	}
	c, err := sts[1].Upstreams().CacheOf(ctx, "a")
	must(t, err)
	if !sameTools(c.Tools, []store.CachedTool{toolX}) {
		t.Fatalf("the other store reads %+v", c.Tools)
	}
	// Two stores refreshing one upstream at once leave one whole list.
	errs := race(func(i int) error {
		tools := []store.CachedTool{toolX, toolY}
		if i%2 == 1 {
			tools = []store.CachedTool{toolY}
		}
		return sts[i%len(sts)].Upstreams().SaveCache(ctx, "a", tools, nil, base, "")
	})
	for _, err := range errs {
		must(t, err)
	}
	c, err = sts[0].Upstreams().CacheOf(ctx, "a")
	must(t, err)
	if !sameTools(c.Tools, []store.CachedTool{toolX, toolY}) && !sameTools(c.Tools, []store.CachedTool{toolY}) {
		t.Fatalf("racing refreshes left %+v, a mix of two lists", c.Tools)
	}
}

// A store that can watch hears of a change made through another.
func sharedWatch(t *testing.T, sts []store.Store) {
	w, ok := sts[1].Approvals().(store.ApprovalWatcher)
	if !ok {
		t.Skip("this backend has no store.ApprovalWatcher; waiting calls poll")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := w.Watch(ctx)
	next := func() string {
		select {
		case id, ok := <-ch:
			if !ok {
				t.Fatal("the watch ended")
			}
			return id
		case <-time.After(30 * time.Second):
			t.Fatal("the watch told nothing within 30s")
		}
		return ""
	}
	if id := next(); id != "" {
		t.Fatalf("the watch's first word %q, want \"\" (listening)", id)
	}
	a := sts[0].Approvals()
	create(t, a, request("ap_w", "bob", "", base))
	_, err := a.Decide(context.Background(), "ap_w", true, "alice", "", base.Add(time.Minute))
	must(t, err)
	var got []string
	for !slices.Contains(got, "ap_w") || len(got) < 2 {
		got = append(got, next())
	}
	if got[0] != "ap_w" || got[1] != "ap_w" {
		t.Fatalf("told %q, want the creation and the decision of ap_w", got)
	}
	cancel()
	for range ch { // closed once ctx ends
	}
}

// Takers on two stores race for one budget: together they never take
// more than its limit.
func sharedQuotas(t *testing.T, sts []store.Store) {
	ctx := context.Background()
	const limit = racers / 2
	taken := race(func(i int) bool {
		_, ok, err := sts[i%len(sts)].Quotas().Take(ctx, "calls/t/acme", base, 1, limit)
		if err != nil {
			t.Error(err)
		}
		return ok
	})
	count, _, err := sts[1].Quotas().Take(ctx, "calls/t/acme", base, 0, math.MaxInt64)
	must(t, err)
	if n := len(slices.DeleteFunc(taken, func(ok bool) bool { return !ok })); n != limit || count != limit {
		t.Fatalf("%d of %d racers took the budget, its count %d; want exactly %d", n, racers, count, limit)
	}
}
