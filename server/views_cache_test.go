package server_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/server"
)

// TestViewCacheIsBounded: principals of 10,000 tenants (as JWTs can name)
// keep the view cache at view_cache_size and the heap flat; the views
// dropped are counted as evictions, those found as hits.
func TestViewCacheIsBounded(t *testing.T) {
	const size, tenants = 100, 10000
	gw := newGateway(t, testConfig+fmt.Sprintf("view_cache_size: %d\n", size))
	url := serve(t, gw)
	of := func(i int) *auth.Principal {
		return &auth.Principal{Name: "u", Role: auth.RoleUser, Tenant: fmt.Sprintf("tenant-%05d", i)}
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for i := range 1000 {
		server.ViewFor(gw, of(i))
	}
	before := heap()
	for i := 1000; i < tenants; i++ {
		server.ViewFor(gw, of(i))
		if n := server.ViewCacheLen(gw); n > size {
			t.Fatalf("%d views cached after %d tenants, want at most %d", n, i+1, size)
		}
	}
	after := heap()
	if after > before+4<<20 {
		t.Errorf("the heap grew from %d to %d bytes over %d more tenants", before, after, tenants-1000)
	}
	if server.ViewFor(gw, of(tenants-1)) != server.ViewFor(gw, of(tenants-1)) {
		t.Error("a recent tenant's view was built again")
	}
	if v := server.ViewFor(gw, of(0)); v.Len() == 0 {
		t.Error("an evicted tenant's view, built again, is empty")
	}
	if got := metric(t, url, "legate_view_cache_evictions_total"); got != tenants-size+1 {
		t.Errorf("evictions %v, want %d", got, tenants-size+1)
	}
	if got := metric(t, url, "legate_view_cache_hits_total"); got != 2 {
		t.Errorf("hits %v, want 2", got)
	}
}
