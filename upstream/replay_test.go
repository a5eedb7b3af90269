package upstream_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// TestReadCallReplayedOnReset: an upstream that drops the pooled
// connection a call arrives on, as a server closing a kept-alive
// connection at that moment does, costs a call that only reads nothing: it
// is sent again on a new connection and answered. A call that may write is
// not sent again (the upstream may have acted on it) and fails.
func TestReadCallReplayedOnReset(t *testing.T) { bothPaths(t, readCallReplayedOnReset) }

func readCallReplayedOnReset(t *testing.T) {
	srv := upstreamtest.NewEchoServer("resets")
	mcp.AddTool(srv, &mcp.Tool{Name: "note", Description: "Write a note."},
		func(ctx context.Context, req *mcp.CallToolRequest, in upstreamtest.EchoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	faulty, s := upstreamtest.NewFaultyHTTP(t, srv)
	m := newManager(t, memStore(t), upstream.Options{BreakerFailures: 10}, upstream.Config{ID: "up", URL: s.URL()})
	m.Start(upstreamtest.Context(t))
	read, write := waitTool(t, m, "up", "echo", 5*time.Second), waitTool(t, m, "up", "note", 5*time.Second)
	if read.Class != legate.ClassRead || write.Class != legate.ClassWrite {
		t.Fatalf("classes %s and %s, want read and write", read.Class, write.Class)
	}
	for _, c := range []struct {
		tool     *upstream.Tool
		requests int64 // the upstream sees
		code     legate.Code
	}{
		{read, 2, ""},
		{write, 1, legate.CodeUpstreamUnavailable},
	} {
		// A first call leaves its connection in the pool for the next.
		if res, err := call(m, c.tool, "first"); err != nil || upstreamtest.Text(res) != "first" {
			t.Fatalf("%s: first call: %v, %v", c.tool.Name, res, err)
		}
		faulty.Set(upstreamtest.CrashOnce)
		before := faulty.Calls.Load()
		res, err := call(m, c.tool, "second")
		if upstreamCode(err) != c.code {
			t.Fatalf("%s after a dropped connection: error %v, want code %q", c.tool.Name, err, c.code)
		}
		if err == nil && upstreamtest.Text(res) != "second" {
			t.Fatalf("%s after a dropped connection: result %q, want %q", c.tool.Name, upstreamtest.Text(res), "second")
		}
		if n := faulty.Calls.Load() - before; n != c.requests {
			t.Fatalf("%s: the upstream saw %d requests, want %d", c.tool.Name, n, c.requests)
		}
	}
}
