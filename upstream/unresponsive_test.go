package upstream_test

import (
	"context"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// An upstream that accepts connections but never answers initialize: while
// Legate connects to it, Status (`legate upstream list`, /metrics) must not
// wait for the connect.
func TestUnresponsiveUpstreamBlocksNothing(t *testing.T) {
	noLeaks(t)
	f, srv := upstreamtest.NewFaultyHTTP(t, upstreamtest.NewEchoServer("bh"))
	f.Set(upstreamtest.Unresponsive)
	st := memStore(t)
	if err := st.Upstreams().SaveCache(context.Background(), "bh", []store.CachedTool{{Name: "echo", Definition: []byte(`{"name":"echo","inputSchema":{"type":"object"}}`), Hash: "h"}}, nil, time.Now(), ""); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, st, upstream.Options{ConnectTimeout: 3 * time.Second}, upstream.Config{ID: "bh", URL: srv.URL()})
	m.Start(upstreamtest.Context(t)) // its first refresh connects, and hangs
	f.WaitHeld(t, 1)                 // its initialize has reached the upstream

	start := time.Now()
	if _, err := m.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 500*time.Millisecond {
		t.Errorf("Status took %s while a connect was in progress", el)
	}
}
