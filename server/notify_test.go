package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
)

// pager is a connector type whose tool page takes a notification and
// panics, counting its calls.
type pager struct{}

type pageArgs struct {
	Event   string         `json:"event"`
	Payload map[string]any `json:"payload"`
}

var pages atomic.Int32

func (pager) Validate() error                                    { return nil }
func (pager) Test(context.Context, connectors.Credentials) error { return nil }
func (pager) Tools() []connectors.Tool {
	return []connectors.Tool{connectors.NewTool("page", "Page someone; panics.", legate.ClassWrite,
		func(ctx context.Context, call *connectors.Call, in *pageArgs) (*legate.Result, error) {
			pages.Add(1)
			panic(fmt.Sprint("pager on fire: ", in.Payload["approval_id"]))
		})}
}

func init() {
	connectors.Register(connectors.Type{
		Name: "pager-test", Description: "a pager that panics",
		New: func(connectors.Instance) (connectors.Connector, error) { return pager{}, nil },
	})
}

// TestANotifierThatPanicsIsRecoveredAndAudited: approvals.notify names any
// tool by canonical name; it runs through the call path as the system
// principal, so its panic ends the notification, not the process, and
// leaves an audit row.
func TestANotifierThatPanicsIsRecoveredAndAudited(t *testing.T) {
	ctx := context.Background()
	st := memStore(t)
	cfg, err := config.Parse([]byte(`
approvals: {wait: 10ms, notify: pager.page}
connectors:
  - {id: e, type: echo-test}
  - {id: pager, type: pager-test}
policy:
  rules:
    - {tool: "e.echo", action: approve}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(ctx, server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	gw.StartAudit(ctx)
	before := pages.Load()
	res, err := gw.Call(ctx, "e.echo", json.RawMessage(`{"text":"hi"}`), server.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	code, id := errorCode(t, res)
	if code != "APPROVAL_PENDING" {
		t.Fatalf("got %s", code)
	}
	waitFor(t, "the notification's audit row", func() bool {
		rows, _ := st.Audit().Query(ctx, store.AuditQuery{Tool: "pager.page"})
		for _, r := range rows {
			if r.Principal == server.SystemPrincipal && r.Outcome == string(legate.CodeAdapterMapping) && r.Decision == "allow" {
				return true
			}
		}
		return false
	})
	if n := pages.Load() - before; n != 1 {
		t.Fatalf("the notifier ran %d times, want once", n)
	}
	if a, err := st.Approvals().Get(ctx, id); err != nil || a.State != store.StatePending {
		t.Fatalf("the request is %+v (%v), want it pending", a, err)
	}
}
