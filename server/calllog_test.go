package server_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"unicode"

	"github.com/legate-mcp/legate/internal/syncbuf"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// Defect 10 of issue 10: a failed call's error text can quote its
// arguments (NOT_FOUND: no approval "…"). As in the audit, no log line
// holds an argument value: the log has the error's code and a hash.
func TestFailedCallLogsNoArgumentValues(t *testing.T) {
	var logs syncbuf.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	raw, up := upstreamtest.NewRaw(t, `{"name":"quotes","inputSchema":{"type":"object"}}`)
	raw.HandleCall(func(name string, args json.RawMessage) (json.RawMessage, error) {
		return nil, fmt.Errorf("bad arguments %s", args)
	})
	gw := upGateway(t, "upstreams:\n  - id: raw\n    url: "+up.URL()+"\n", memStore(t), log)
	waitCatalog(t, gw, "mcp.raw.quotes")

	cases := map[string]struct {
		tool, args string
		logged     string // a line that must be there
	}{
		"the gateway's error, logged at warn": {"legate.approval_status", `{"approval_id":"%s"}`, `"code":"NOT_FOUND"`},
		"an upstream's JSON-RPC error":        {"mcp.raw.quotes", `{"x":"%s"}`, `"rpc_code":-32601`},
	}
	cs := connect(t, serve(t, gw), "2025-11-25")
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			canary := "argcanary" + randHex(t)
			args := fmt.Sprintf(c.args, canary)
			res, err := gw.Call(context.Background(), c.tool, json.RawMessage(args), server.CallOptions{})
			if err == nil && !res.IsError {
				t.Fatalf("the call did not fail: %+v", res)
			}
			// And through the MCP front door. (Its error need not quote the
			// argument: the SDK's path answers an upstream's -32601 with its
			// own "method not found" text, the fast path with the upstream's.)
			res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: wire(c.tool), Arguments: json.RawMessage(args)})
			if err == nil && !res.IsError {
				t.Fatalf("over MCP, the call did not fail: %+v", res)
			}
			if got := logs.String(); strings.Contains(got, canary) || !strings.Contains(got, c.logged) || !strings.Contains(got, `"error_hash":"`) {
				t.Fatalf("logs (want %s and an error_hash, and not %s):\n%s", c.logged, canary, got)
			}
		})
	}
}

func randHex(t *testing.T) string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Defect 10 of issue 10: a call to a tool that does not exist left no audit
// row. It is audited, the name the caller gave bounded and printable.
func TestUnknownToolCallIsAudited(t *testing.T) {
	st := memStore(t)
	gw := upGateway(t, "", st, nil)
	ctx := context.Background()

	long := "no.such_" + strings.Repeat("x", 5000) + "\x1b[2J\u202e"
	if _, err := gw.Call(ctx, long, nil, server.CallOptions{}); !errors.Is(err, server.ErrUnknownTool) {
		t.Fatalf("direct call: %v", err)
	}
	cs := connect(t, serve(t, gw), "2025-11-25")
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nosuch"}); err == nil {
		t.Fatal("an unknown tool answered")
	}

	var rows []store.AuditRow
	waitFor(t, "two audit rows", func() bool {
		rows, _ = st.Audit().Query(ctx, store.AuditQuery{})
		return len(rows) == 2
	})
	for i, r := range rows {
		if r.Outcome != "UNKNOWN_TOOL" || r.Principal != "local" || r.Source != "unknown" || r.Decision != "" {
			t.Errorf("row %d: %+v", i, r)
		}
		if len(r.Tool) > 130 || strings.ContainsFunc(r.Tool, func(c rune) bool { return !unicode.IsPrint(c) }) {
			t.Errorf("row %d names the tool %q: unbounded or unprintable", i, r.Tool)
		}
	}
	if !strings.HasPrefix(rows[0].Tool, "no.such_xxx") || rows[1].Tool != "nosuch" || rows[1].Session == "" {
		t.Errorf("rows name %q, %q (session %q)", rows[0].Tool, rows[1].Tool, rows[1].Session)
	}
}
