package storetest

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
)

func testUpstreams(t *testing.T, open Opener) {
	st := open(t)
	t.Run("definitions", func(t *testing.T) { upstreamDefinitions(t, st.Upstreams()) })
	t.Run("cache", func(t *testing.T) { upstreamCache(t, open(t).Upstreams()) })
	t.Run("delete takes the cache", func(t *testing.T) { upstreamDeleteTakesCache(t, open(t).Upstreams()) })
}

func upstreamDefinitions(t *testing.T, us store.UpstreamStore) {
	ctx := context.Background()
	if list, err := us.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("empty store lists %v, %v", list, err)
	}
	b := store.Upstream{ID: "b", Definition: []byte(`{"url":"http://127.0.0.1:2/mcp"}`), CreatedAt: base}
	a := store.Upstream{ID: "a", Definition: []byte(`{"command":["srv","--stdio"]}`), CreatedAt: base}
	must(t, us.Create(ctx, b))
	must(t, us.Create(ctx, a))
	if err := us.Create(ctx, a); !errors.Is(err, store.ErrExists) {
		t.Fatalf("creating an id in use: %v, want ErrExists", err)
	}
	list, err := us.List(ctx)
	must(t, err)
	if len(list) != 2 || list[0].ID != "a" || list[1].ID != "b" {
		t.Fatalf("list, by id: %+v", list)
	}
	if !sameJSON(list[0].Definition, a.Definition) || !list[0].CreatedAt.Equal(base) {
		t.Fatalf("list[0]:\n got %+v\nwant %+v", list[0], a)
	}
	must(t, us.Delete(ctx, "a"))
	if err := us.Delete(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	if list, _ := us.List(ctx); len(list) != 1 || list[0].ID != "b" {
		t.Fatalf("after delete: %+v", list)
	}
}

var (
	toolX = store.CachedTool{Name: "x", Definition: []byte(`{"name":"x","inputSchema":{"type":"object"}}`), Hash: "hx"}
	toolY = store.CachedTool{Name: "y", Definition: []byte(`{"name":"y","inputSchema":{"type":"object"}}`), Hash: "hy"}
)

// sameTools compares cached tools whatever their order.
func sameTools(got, want []store.CachedTool) bool {
	if len(got) != len(want) {
		return false
	}
	got = slices.Clone(got)
	slices.SortFunc(got, func(a, b store.CachedTool) int { return cmp.Compare(a.Name, b.Name) })
	for i := range got {
		if got[i].Name != want[i].Name || got[i].Hash != want[i].Hash || !sameJSON(got[i].Definition, want[i].Definition) {
			return false
		}
	}
	return true
}

// version reads the cache version.
func version(t *testing.T, us store.UpstreamStore) int64 {
	t.Helper()
	v, err := us.CacheVersion(context.Background())
	must(t, err)
	return v
}

func upstreamCache(t *testing.T, us store.UpstreamStore) {
	ctx := context.Background()
	if c, err := us.CacheOf(ctx, "a"); err != nil || c.Tools != nil || !c.RefreshedAt.IsZero() || c.LastError != "" {
		t.Fatalf("cache of an upstream never refreshed: %+v %v, want zero", c, err)
	}
	if all, err := us.Cache(ctx); err != nil || len(all) != 0 {
		t.Fatalf("empty cache: %v %v", all, err)
	}

	v0 := version(t, us)
	must(t, us.SaveCache(ctx, "a", []store.CachedTool{toolY, toolX}, []string{"file:///r1"}, base, ""))
	v1 := version(t, us)
	if v1 == v0 {
		t.Fatal("saving tools leaves the cache version as it was")
	}
	c, err := us.CacheOf(ctx, "a")
	must(t, err)
	if !sameTools(c.Tools, []store.CachedTool{toolX, toolY}) || !slices.Equal(c.Resources, []string{"file:///r1"}) ||
		!c.RefreshedAt.Equal(base) || c.CheckedAt.IsZero() || c.LastError != "" {
		t.Fatalf("cache after a refresh: %+v", c)
	}

	// A failed refresh records its error and keeps what was cached.
	must(t, us.SaveCache(ctx, "a", nil, nil, time.Time{}, "connection refused"))
	c, err = us.CacheOf(ctx, "a")
	must(t, err)
	if !sameTools(c.Tools, []store.CachedTool{toolX, toolY}) || !slices.Equal(c.Resources, []string{"file:///r1"}) ||
		!c.RefreshedAt.Equal(base) || c.LastError != "connection refused" {
		t.Fatalf("cache after a failed refresh: %+v", c)
	}

	// An upstream that lists nothing now has nothing cached.
	later := base.Add(time.Minute)
	must(t, us.SaveCache(ctx, "a", []store.CachedTool{}, []string{}, later, ""))
	c, err = us.CacheOf(ctx, "a")
	must(t, err)
	if len(c.Tools) != 0 || len(c.Resources) != 0 || !c.RefreshedAt.Equal(later) || c.LastError != "" {
		t.Fatalf("cache after an empty refresh: %+v", c)
	}
	v2 := version(t, us)
	if v2 == v1 {
		t.Fatal("emptying the tools leaves the cache version as it was")
	}

	must(t, us.SaveCache(ctx, "b", []store.CachedTool{toolX}, nil, base, ""))
	all, err := us.Cache(ctx)
	must(t, err)
	if len(all) != 2 || !sameTools(all["b"].Tools, []store.CachedTool{toolX}) || len(all["a"].Tools) != 0 {
		t.Fatalf("every cache: %+v", all)
	}

	v3 := version(t, us)
	must(t, us.DeleteCache(ctx, "b"))
	if c, err := us.CacheOf(ctx, "b"); err != nil || c.Tools != nil || !c.RefreshedAt.IsZero() {
		t.Fatalf("cache after DeleteCache: %+v %v", c, err)
	}
	if version(t, us) == v3 {
		t.Fatal("deleting a cache leaves the cache version as it was")
	}
}

func upstreamDeleteTakesCache(t *testing.T, us store.UpstreamStore) {
	ctx := context.Background()
	must(t, us.Create(ctx, store.Upstream{ID: "a", Definition: []byte(`{}`), CreatedAt: base}))
	must(t, us.SaveCache(ctx, "a", []store.CachedTool{toolX}, nil, base, ""))
	v := version(t, us)
	must(t, us.Delete(ctx, "a"))
	if c, err := us.CacheOf(ctx, "a"); err != nil || c.Tools != nil {
		t.Fatalf("cache of a deleted upstream: %+v %v", c, err)
	}
	if version(t, us) == v {
		t.Fatal("deleting an upstream with a cache leaves the cache version as it was")
	}
}
