// Package eventstest is the part of the store suite (package storetest)
// that an EventStore passes: each inbound event stored once per instance
// and provider event id, whoever races to store it, listed newest first,
// paged and filtered, and pruned by reception.
package eventstest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
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

// event is an event of instance inst with provider id pid, received at.
func event(inst, pid, kind string, at time.Time) store.Event {
	return store.Event{Instance: inst, Tenant: "acme", Provider: "github", ProviderID: pid, Kind: kind,
		Object: "https://github.com/o/r/issues/1", Actor: "octocat", Time: at.Add(-time.Second), Received: at,
		Meta: []byte(`{"repository":"o/r"}`), Payload: []byte(`{"action":"opened"}`)}
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return bytes.Equal(a, b)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

// Run runs the suite on the event stores open opens, an empty one for
// each test.
func Run(t *testing.T, open func(t *testing.T) store.EventStore) {
	ctx := context.Background()

	t.Run("stored once per instance and provider id", func(t *testing.T) {
		ev := open(t)
		first, added, err := ev.Add(ctx, event("gh", "d-1", "issues.opened", base))
		must(t, err)
		if !added || first.ID == 0 {
			t.Fatalf("first add: added %v, id %d", added, first.ID)
		}
		again := event("gh", "d-1", "issues.closed", base.Add(time.Minute))
		got, added, err := ev.Add(ctx, again)
		must(t, err)
		if added || got.ID != first.ID || got.Kind != "issues.opened" || !got.Received.Equal(base) {
			t.Fatalf("second add of d-1: added %v, %+v; want the first event back", added, got)
		}
		other, added, err := ev.Add(ctx, event("gh2", "d-1", "issues.opened", base))
		must(t, err)
		if !added || other.ID <= first.ID {
			t.Fatalf("the same id in another instance: added %v, id %d", added, other.ID)
		}
		list, err := ev.List(ctx, store.EventQuery{Instance: "gh"})
		must(t, err)
		if len(list) != 1 {
			t.Fatalf("gh holds %d events, want 1", len(list))
		}
		e := list[0]
		want := event("gh", "d-1", "issues.opened", base)
		if e.ID != first.ID || e.Tenant != "acme" || e.Provider != "github" || e.ProviderID != "d-1" || e.Object != want.Object ||
			e.Actor != "octocat" || !e.Time.Equal(want.Time) || !e.Received.Equal(base) || !sameJSON(e.Meta, want.Meta) ||
			string(e.Payload) != string(want.Payload) || e.Truncated {
			t.Fatalf("listed %+v, want %+v", e, want)
		}
	})

	t.Run("newest first, paged, filtered", func(t *testing.T) {
		ev := open(t)
		kinds := []string{"issues.opened", "push", "issues.closed", "issues_comment.created", "push"}
		for i, k := range kinds {
			_, _, err := ev.Add(ctx, event("gh", fmt.Sprint("d-", i), k, base.Add(time.Duration(i)*time.Minute)))
			must(t, err)
		}
		pids := func(es []store.Event) []string {
			var out []string
			for _, e := range es {
				out = append(out, e.ProviderID)
			}
			return out
		}
		page, err := ev.List(ctx, store.EventQuery{Instance: "gh", Limit: 2})
		must(t, err)
		if got := pids(page); !slices.Equal(got, []string{"d-4", "d-3"}) {
			t.Fatalf("first page %v", got)
		}
		page, err = ev.List(ctx, store.EventQuery{Instance: "gh", Limit: 2, BeforeID: page[1].ID})
		must(t, err)
		if got := pids(page); !slices.Equal(got, []string{"d-2", "d-1"}) {
			t.Fatalf("second page %v", got)
		}
		for q, want := range map[store.EventQuery][]string{
			{Instance: "gh", Kind: "push"}:                               {"d-4", "d-1"},
			{Instance: "gh", Kind: "issues."}:                            {"d-2", "d-0"},
			{Instance: "gh", Kind: "issues"}:                             nil,
			{Instance: "gh", Since: base.Add(3 * time.Minute)}:           {"d-4", "d-3"},
			{Instance: "gh", Kind: "push", Since: base.Add(time.Minute)}: {"d-4", "d-1"},
			{Instance: "other"}:                                          nil,
		} {
			got, err := ev.List(ctx, q)
			must(t, err)
			if !slices.Equal(pids(got), want) {
				t.Errorf("%+v: %v, want %v", q, pids(got), want)
			}
		}
	})

	t.Run("prune by reception", func(t *testing.T) {
		ev := open(t)
		for i := range 3 {
			_, _, err := ev.Add(ctx, event("gh", fmt.Sprint("d-", i), "push", base.Add(time.Duration(i)*time.Hour)))
			must(t, err)
		}
		n, err := ev.Prune(ctx, base.Add(90*time.Minute))
		must(t, err)
		list, err := ev.List(ctx, store.EventQuery{})
		must(t, err)
		if n != 2 || len(list) != 1 || list[0].ProviderID != "d-2" {
			t.Fatalf("pruned %d, left %d", n, len(list))
		}
	})

	t.Run("racing deliveries store one", func(t *testing.T) {
		ev := open(t)
		var wg sync.WaitGroup
		var mu sync.Mutex
		added, ids := 0, map[int64]bool{}
		for range 8 {
			wg.Go(func() {
				e, ok, err := ev.Add(ctx, event("gh", "d-race", "push", base))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				ids[e.ID] = true
				if ok {
					added++
				}
			})
		}
		wg.Wait()
		if added != 1 || len(ids) != 1 {
			t.Fatalf("%d adds stored, %d ids seen; want 1 and 1", added, len(ids))
		}
	})
}

// Shared checks two event stores on one database: an event one adds is
// read by the other, a second delivery to the other is not stored again,
// and the other's store.EventWatcher, if it is one, hears of it.
func Shared(t *testing.T, a, b store.EventStore) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ch <-chan string
	if w, ok := b.(store.EventWatcher); ok {
		ch = w.WatchEvents(ctx)
		select {
		case id := <-ch:
			if id != "" {
				t.Fatalf("the watch's first word %q, want \"\" (listening)", id)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the watch told nothing within 30s")
		}
	}
	_, added, err := a.Add(ctx, event("gh", "d-shared", "push", base))
	must(t, err)
	_, again, err := b.Add(ctx, event("gh", "d-shared", "push", base))
	must(t, err)
	list, err := b.List(ctx, store.EventQuery{Instance: "gh"})
	must(t, err)
	if !added || again || len(list) != 1 {
		t.Fatalf("added %v then %v, %d listed", added, again, len(list))
	}
	if ch == nil {
		return
	}
	for { // another database's tests may be told on the same channel
		select {
		case id := <-ch:
			if id == "gh" {
				return
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the watch told nothing of the event within 30s")
		}
	}
}
