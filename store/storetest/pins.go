package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
)

func testPins(t *testing.T, open Opener) {
	ctx := context.Background()
	st := open(t)
	ps, us := st.Pins(), st.Upstreams()
	if all, err := ps.List(ctx); err != nil || len(all) != 0 {
		t.Fatalf("empty store lists %v, %v", all, err)
	}
	if _, err := ps.Get(ctx, "up", "x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get unknown: %v, want ErrNotFound", err)
	}

	first := store.Pin{Hash: "h1", Definition: []byte(`{"name":"x","description":"one"}`), AcceptedAt: base, AcceptedBy: "tofu"}
	must(t, ps.Set(ctx, "up", "x", first, true))
	must(t, ps.Set(ctx, "up", "y", store.Pin{Hash: "hy", Definition: []byte(`{}`), AcceptedAt: base, AcceptedBy: "tofu"}, true))
	must(t, ps.Set(ctx, "other", "x", store.Pin{Hash: "ho", Definition: []byte(`{}`), AcceptedAt: base, AcceptedBy: "tofu"}, true))
	pinIs(t, ps, "up", "x", first)

	// Trust on first use keeps the pin there is.
	second := store.Pin{Hash: "h2", Definition: []byte(`{"name":"x","description":"two"}`), AcceptedAt: base.Add(time.Minute), AcceptedBy: "admin"}
	must(t, ps.Set(ctx, "up", "x", second, true))
	pinIs(t, ps, "up", "x", first)

	// An admin accepting replaces it, and a server polling sees a change.
	v, err := us.CacheVersion(ctx)
	must(t, err)
	must(t, ps.Set(ctx, "up", "x", second, false))
	pinIs(t, ps, "up", "x", second)
	if v2, err := us.CacheVersion(ctx); err != nil || v2 == v {
		t.Fatalf("accepting a pin leaves the cache version at %d (%v)", v2, err)
	}

	all, err := ps.List(ctx)
	must(t, err)
	if len(all) != 2 || len(all["up"]) != 2 || len(all["other"]) != 1 {
		t.Fatalf("list, by upstream and tool: %+v", all)
	}
	if p := all["up"]["x"]; p.Hash != "h2" || p.AcceptedBy != "admin" || !p.AcceptedAt.Equal(second.AcceptedAt) {
		t.Fatalf("listed pin: %+v, want %+v", p, second)
	}
}

func pinIs(t *testing.T, ps store.PinStore, upstream, tool string, want store.Pin) {
	t.Helper()
	got, err := ps.Get(context.Background(), upstream, tool)
	must(t, err)
	if got.Hash != want.Hash || !sameJSON(got.Definition, want.Definition) || !got.AcceptedAt.Equal(want.AcceptedAt) || got.AcceptedBy != want.AcceptedBy {
		t.Fatalf("pin of %s in %s:\n got %+v\nwant %+v", tool, upstream, got, want)
	}
}
