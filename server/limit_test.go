package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// The top-level max_result_bytes bounds the results of upstreams that set
// none: over it, a call ends in a tool error naming the key, through the
// call path and through the HTTP fast path alike.
func TestTopLevelMaxResultBytes(t *testing.T) {
	raw, up := upstreamtest.NewRaw(t, `{"name":"big","inputSchema":{"type":"object"}}`)
	text, _ := json.Marshal(strings.Repeat("b", 2<<20))
	raw.HandleCall(func(string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"content":[{"type":"text","text":` + string(text) + `}]}`), nil
	})
	gw := upGateway(t, "max_result_bytes: 1048576\nupstreams:\n  - id: raw\n    url: "+up.URL()+"\n", memStore(t), nil)
	waitCatalog(t, gw, "mcp.raw.big")

	direct, err := gw.Call(context.Background(), "mcp.raw.big", nil, server.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, serve(t, gw), "2026-07-28") // stateless: relayed as bytes
	relayed, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: wire("mcp.raw.big")})
	if err != nil {
		t.Fatal(err)
	}
	for name, res := range map[string]*mcp.CallToolResult{"call path": direct, "fast path": relayed} {
		b, _ := json.Marshal(res)
		if !res.IsError || !strings.Contains(string(b), "ADAPTER_MAPPING_ERROR") || !strings.Contains(string(b), "1048576") || len(b) > 4096 {
			t.Errorf("%s: %.300s", name, b)
		}
	}
}
