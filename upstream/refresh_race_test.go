package upstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// A refresh whose listing ran while another replica cached a newer one
// does not write its own over it: the other's rows stay in the store and
// become the catalog's (before, the slower refresh put back the tool set
// the upstream had left, on every replica, until the next refresh).
func TestRefreshKeepsANewerListingCachedMeanwhile(t *testing.T) {
	raw := &upstreamtest.Raw{}
	raw.SetTools(rawTool("a"))
	st := memStore(t)
	var during atomic.Pointer[func()] // run once, inside the next tools/list
	srv := upstreamtest.NewServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct{ Method string }
		json.Unmarshal(body, &msg)
		if msg.Method == "tools/list" {
			if f := during.Swap(nil); f != nil {
				(*f)()
			}
		}
		raw.ServeHTTP(w, r)
	}))
	m := newManager(t, st, upstream.Options{}, upstream.Config{ID: "raw", URL: srv.URL()})
	ctx := context.Background()
	if _, err := m.Refresh(ctx, "raw"); err != nil || !slices.Equal(names(m, "raw"), []string{"a"}) {
		t.Fatalf("first refresh: %v %v", names(m, "raw"), err)
	}

	// While this refresh's listing runs (and answers the old list), another
	// replica caches the upstream's new one.
	first, err := st.Upstreams().CacheOf(ctx, "raw")
	if err != nil {
		t.Fatal(err)
	}
	newer := append(first.Tools, store.CachedTool{Name: "fresh", Definition: json.RawMessage(rawTool("fresh"))}) // "a" as cached, so as pinned
	f := func() {
		if err := st.Upstreams().SaveCache(ctx, "raw", newer, nil, time.Now(), ""); err != nil {
			t.Error(err)
		}
	}
	during.Store(&f)
	if _, err := m.Refresh(ctx, "raw"); err != nil {
		t.Fatal(err)
	}
	c, err := st.Upstreams().CacheOf(ctx, "raw")
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for _, r := range c.Tools {
		stored = append(stored, r.Name)
	}
	if !slices.Equal(stored, []string{"a", "fresh"}) || !slices.Equal(names(m, "raw"), []string{"a", "fresh"}) {
		t.Errorf("after a refresh that listed while a newer listing was cached: store %v, catalog %v; want [a fresh] in both", stored, names(m, "raw"))
	}
}
