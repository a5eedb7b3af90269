package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// An approved request whose tool is gone by the time it runs fails without
// reaching the call path; it is audited all the same, like any call.
func TestApprovedRunOfAGoneToolIsAudited(t *testing.T) {
	ctx := context.Background()
	raw, up := upstreamtest.NewRaw(t, `{"name":"w","inputSchema":{"type":"object"}}`)
	st := memStore(t)
	cfg, err := config.Parse([]byte("approvals: {wait: 100ms}\nupstreams:\n  - id: raw\n    url: "+up.URL()+"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(ctx, server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	gw.Start(ctx)
	waitCatalog(t, gw, "mcp.raw.w")

	res, _ := gw.Call(ctx, "mcp.raw.w", json.RawMessage(`{}`), server.CallOptions{})
	code, id := errorCode(t, res)
	if code != "APPROVAL_PENDING" {
		t.Fatalf("got %s", code)
	}
	raw.SetTools()
	if _, err := gw.Upstreams().Refresh(ctx, "raw"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the tool to go", func() bool { _, ok := gw.Catalog().Lookup("mcp.raw.w"); return !ok })
	if _, err := gw.Decide(ctx, id, true, "bob", ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run's audit row", func() bool {
		rows, _ := st.Audit().Query(ctx, store.AuditQuery{Tool: "mcp.raw.w"})
		for _, r := range rows {
			if r.ApprovalID == id && r.Outcome == "NOT_FOUND" && r.Principal == "local" {
				return true
			}
		}
		return false
	})
}
