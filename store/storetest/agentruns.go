package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
)

func testAgentRuns(t *testing.T, open Opener) {
	ctx := context.Background()
	runs := open(t).AgentRuns()
	if _, err := runs.Get(ctx, "run-none"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get unknown: %v, want ErrNotFound", err)
	}
	first := store.AgentRun{ID: "run-1", Principal: "alice", Tenant: "acme", Instruction: "tidy the logs", Stopped: "running",
		StartedAt: base, UpdatedAt: base, Record: []byte(`{"turns":0}`)}
	must(t, runs.Put(ctx, first))
	// A run is updated in place as it goes.
	first.Stopped, first.UpdatedAt, first.Record = "answered", base.Add(3*time.Second), []byte(`{"turns":2,"reply":"done"}`)
	must(t, runs.Put(ctx, first))
	must(t, runs.Put(ctx, store.AgentRun{ID: "run-2", Principal: "bob", Instruction: "build", Stopped: "max_turns",
		StartedAt: base.Add(time.Minute), UpdatedAt: base.Add(time.Minute), Record: []byte(`{}`)}))

	got, err := runs.Get(ctx, "run-1")
	must(t, err)
	if got.Stopped != "answered" || string(got.Record) != `{"turns":2,"reply":"done"}` || got.Principal != "alice" || got.Tenant != "acme" ||
		got.Instruction != "tidy the logs" || !got.StartedAt.Equal(base) || !got.UpdatedAt.Equal(base.Add(3*time.Second)) {
		t.Fatalf("get after update: %+v", got)
	}
	all, err := runs.List(ctx, store.AgentRunFilter{})
	must(t, err)
	if len(all) != 2 || all[0].ID != "run-2" || all[1].ID != "run-1" || all[0].Record != nil {
		t.Fatalf("list: %+v, want run-2 then run-1 without records", all)
	}
	mine, err := runs.List(ctx, store.AgentRunFilter{Principal: "alice"})
	must(t, err)
	if len(mine) != 1 || mine[0].ID != "run-1" {
		t.Fatalf("list of alice: %+v", mine)
	}
	if one, _ := runs.List(ctx, store.AgentRunFilter{Limit: 1}); len(one) != 1 {
		t.Fatalf("limit 1: %d runs", len(one))
	}
	if none, _ := runs.List(ctx, store.AgentRunFilter{Tenant: "other"}); len(none) != 0 {
		t.Fatalf("list of another tenant: %+v", none)
	}

	// Pruning removes the runs that ended before the cut, never one still
	// running however old.
	old := base.Add(-48 * time.Hour)
	must(t, runs.Put(ctx, store.AgentRun{ID: "old-ended", Principal: "carol", Stopped: "answered", StartedAt: old, UpdatedAt: old, Record: []byte(`{}`)}))
	must(t, runs.Put(ctx, store.AgentRun{ID: "old-running", Principal: "carol", Stopped: "running", StartedAt: old, UpdatedAt: old, Record: []byte(`{}`)}))
	n, err := runs.Prune(ctx, base.Add(-24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("prune: %d runs, %v; want 1", n, err)
	}
	if _, err := runs.Get(ctx, "old-ended"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a pruned run is still there: %v", err)
	}
	for _, id := range []string{"old-running", "run-1", "run-2"} {
		if _, err := runs.Get(ctx, id); err != nil {
			t.Fatalf("%s was pruned: %v", id, err)
		}
	}
}
