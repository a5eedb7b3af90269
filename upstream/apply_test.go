package upstream_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// Apply changes the upstreams of a running manager: an added upstream is
// refreshed and its tools listed; an unchanged one keeps its state (the
// same *Upstream, its session); a changed one is rebuilt; a removed one's
// tools leave at once and calls to it fail UPSTREAM_UNAVAILABLE.
func TestApplyChangesTheUpstreamsInUse(t *testing.T) {
	noLeaks(t)
	_, keep := upstreamtest.NewRaw(t, rawTool("kept"))
	_, added := upstreamtest.NewRaw(t, rawTool("fresh"))
	st := memStore(t)
	var changes atomic.Int32
	m := newManager(t, st, upstream.Options{OnToolsChanged: func() { changes.Add(1) }}, upstream.Config{ID: "keep", URL: keep.URL()})
	m.Start(upstreamtest.Context(t))
	waitTool(t, m, "keep", "kept", 10*time.Second)
	if _, err := call(m, tool(m, "keep", "kept"), "x"); err != nil {
		t.Fatal(err)
	}
	kept, _ := m.Upstream("keep")
	ctx := context.Background()

	got, err := m.Apply(ctx, []upstream.Def{
		{Config: upstream.Config{ID: "keep", URL: keep.URL()}, Origin: "test upstreams[0]"},
		{Config: upstream.Config{ID: "added", URL: added.URL()}, Origin: "the store"},
	})
	if err != nil || !slices.Equal(got, []string{"added"}) {
		t.Fatalf("Apply = %v, %v; want [added]", got, err)
	}
	if u, _ := m.Upstream("keep"); u != kept {
		t.Error("an unchanged upstream was rebuilt")
	}
	fresh := waitTool(t, m, "added", "fresh", 10*time.Second)
	if _, err := call(m, fresh, "x"); err != nil {
		t.Fatalf("calling the added upstream: %v", err)
	}

	// A changed definition is rebuilt; a removed one is gone.
	got, err = m.Apply(ctx, []upstream.Def{{Config: upstream.Config{ID: "added", URL: added.URL(), Timeout: legate.Duration(time.Minute)}, Origin: "the store"}})
	if err != nil || !slices.Equal(got, []string{"added", "keep"}) {
		t.Fatalf("Apply = %v, %v; want [added keep]", got, err)
	}
	if ids := m.IDs(); !slices.Equal(ids, []string{"added"}) {
		t.Fatalf("IDs = %v", ids)
	}
	if names(m, "keep") != nil {
		t.Errorf("the removed upstream's tools are still listed: %v", names(m, "keep"))
	}
	old := tool(m, "added", "fresh")
	if _, err := call(m, &upstream.Tool{Upstream: "keep", Name: "kept"}, "x"); upstreamCode(err) != legate.CodeUpstreamUnavailable {
		t.Errorf("a call to the removed upstream: %v, want UPSTREAM_UNAVAILABLE", err)
	}
	if _, err := call(m, old, "x"); err != nil {
		t.Errorf("calling the changed upstream: %v", err)
	}

	// Duplicates change nothing.
	if _, err := m.Apply(ctx, []upstream.Def{{Config: upstream.Config{ID: "a", URL: added.URL()}}, {Config: upstream.Config{ID: "a", URL: keep.URL()}}}); err == nil {
		t.Fatal("Apply took an id defined twice")
	}
	if ids := m.IDs(); !slices.Equal(ids, []string{"added"}) {
		t.Fatalf("after a refused Apply, IDs = %v", ids)
	}
	if changes.Load() == 0 {
		t.Error("OnToolsChanged was never called")
	}
}
