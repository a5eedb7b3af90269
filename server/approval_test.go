package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/config"
	_ "github.com/legate-mcp/legate/connectors/webhook"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

// receiver counts webhook deliveries by delivery id.
type receiver struct {
	mu    sync.Mutex
	count map[string]int
	total atomic.Int64
	url   string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{count: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		r.mu.Lock()
		r.count[req.Header.Get("X-Legate-Delivery")]++
		r.mu.Unlock()
		r.total.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/in"
	return r
}

func approvalGateway(t *testing.T, st *sqlite.Store, recv *receiver, extra string) *server.Gateway {
	t.Helper()
	approvals := "wait: 300ms" + extra
	if strings.Contains(extra, "wait:") {
		approvals = strings.TrimPrefix(extra, ", ") // a key given twice is an error
	}
	cfg, err := config.Parse([]byte(`
approvals: {`+approvals+`}
connectors:
  - id: hooks
    type: webhook
    config: {url: "`+recv.url+`", allow_private_networks: true, max_attempts: 1}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	return gw
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

// gatewayError is a gateway error result's details: in its structured
// content, or in _meta for a tool that declares an output schema.
func gatewayError(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	if e, ok := res.Meta[server.ErrorMetaKey]; ok {
		b, _ := json.Marshal(e)
		var m map[string]any
		json.Unmarshal(b, &m)
		return m
	}
	e, _ := structured(t, res)["error"].(map[string]any)
	return e
}

func errorCode(t *testing.T, res *mcp.CallToolResult) (code, approvalID string) {
	t.Helper()
	e := gatewayError(t, res)
	if e == nil {
		return "", ""
	}
	id, _ := e["approval_id"].(string)
	return e["code"].(string), id
}

func TestApprovalRunsExactlyOnce(t *testing.T) {
	ctx := context.Background()
	st := memStore(t)
	recv := newReceiver(t)
	gw := approvalGateway(t, st, recv, "")
	gw.Start(ctx)
	args := json.RawMessage(`{"payload":{"order":1}}`)

	res, err := gw.Call(ctx, "hooks__send", args, server.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	code, id := errorCode(t, res)
	if code != "APPROVAL_PENDING" || id == "" {
		t.Fatalf("first call: %v", structured(t, res))
	}
	if recv.total.Load() != 0 {
		t.Fatal("the receiver got a delivery before approval")
	}

	// Concurrent approvals, the client calling again meanwhile, and the
	// background executor all race for the one request.
	var wg sync.WaitGroup
	var wins atomic.Int64
	for range 8 {
		wg.Go(func() {
			if _, err := gw.Decide(ctx, id, true, "alice", "ok"); err == nil {
				wins.Add(1)
			} else if !errors.Is(err, store.ErrConflict) {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if _, err := gw.Call(ctx, "hooks__send", args, server.CallOptions{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d decisions succeeded, want 1", wins.Load())
	}
	waitFor(t, "the delivery", func() bool { return recv.total.Load() >= 1 })
	time.Sleep(700 * time.Millisecond) // give a second execution every chance to happen
	if n := recv.total.Load(); n != 1 {
		t.Fatalf("receiver got %d deliveries, want exactly 1", n)
	}

	// Calling again with the same arguments returns the stored outcome.
	res, err = gw.Call(ctx, "hooks__send", args, server.CallOptions{})
	if err != nil || res.IsError || structured(t, res)["delivery_id"] != id {
		t.Fatalf("second call: %v %v", structured(t, res), err)
	}
	if recv.total.Load() != 1 {
		t.Fatal("calling again delivered again")
	}
	// In the audit, one row is the run; every call that got its stored
	// outcome is a replay, not a second execution.
	var runs, replays int
	waitFor(t, "the second call's audit row", func() bool {
		rows, err := st.Audit().Query(ctx, store.AuditQuery{Tool: "hooks.send"})
		if err != nil {
			t.Fatal(err)
		}
		runs, replays = 0, 0
		for _, r := range rows {
			switch {
			case r.ApprovalID != id || r.Outcome != "ok":
			case r.Decision == "replay" && strings.Contains(r.Detail, "did not run again"):
				replays++
			case r.Decision == "approve":
				runs++
			default:
				t.Fatalf("row: %+v", r)
			}
		}
		return replays >= 1 && runs >= 1
	})
	if runs != 1 {
		t.Fatalf("%d audit rows of a run, want 1 (and %d replays)", runs, replays)
	}
	// So does legate.approval_status.
	res, _ = gw.Call(ctx, "legate.approval_status", json.RawMessage(`{"approval_id":"`+id+`"}`), server.CallOptions{})
	if s := structured(t, res); s["state"] != "executed" || s["outcome"] == nil {
		t.Fatalf("approval_status: %v", s)
	}
	waitFor(t, "approval_status's audit row, a replay of the approval", func() bool {
		rows, _ := st.Audit().Query(ctx, store.AuditQuery{Tool: "legate.approval_status"})
		return len(rows) == 1 && rows[0].Decision == "replay" && rows[0].ApprovalID == id
	})

	// Changed arguments: a new request, not the old approval.
	res, _ = gw.Call(ctx, "hooks__send", json.RawMessage(`{"payload":{"order":2}}`), server.CallOptions{})
	if code, id2 := errorCode(t, res); code != "APPROVAL_PENDING" || id2 == id {
		t.Fatalf("changed arguments: %s %s", code, id2)
	}
	if recv.total.Load() != 1 {
		t.Fatal("changed arguments ran on the old approval")
	}
}

func TestDenyAndDecisionWithinTheWait(t *testing.T) {
	ctx := context.Background()
	st := memStore(t)
	recv := newReceiver(t)
	gw := approvalGateway(t, st, recv, ", wait: 5s")
	gw.Start(ctx)

	// Decided while the call waits: the same call gets the outcome.
	go func() {
		waitFor(t, "a pending request", func() bool { n, _ := st.Approvals().CountPending(ctx); return n == 1 })
		list, _ := st.Approvals().List(ctx, store.ApprovalFilter{State: store.StatePending, AllTenants: true, Limit: 1})
		gw.Decide(ctx, list[0].ID, true, "bob", "")
	}()
	res, err := gw.Call(ctx, "hooks.send", json.RawMessage(`{"payload":"now"}`), server.CallOptions{})
	if err != nil || res.IsError {
		t.Fatalf("approved within the wait: %v %v", structured(t, res), err)
	}
	if recv.total.Load() != 1 {
		t.Fatalf("deliveries %d", recv.total.Load())
	}

	go func() {
		waitFor(t, "a pending request", func() bool { n, _ := st.Approvals().CountPending(ctx); return n == 1 })
		list, _ := st.Approvals().List(ctx, store.ApprovalFilter{State: store.StatePending, AllTenants: true, Limit: 1})
		gw.Decide(ctx, list[0].ID, false, "bob", "not today")
	}()
	res, _ = gw.Call(ctx, "hooks.send", json.RawMessage(`{"payload":"never"}`), server.CallOptions{})
	if code, _ := errorCode(t, res); code != "APPROVAL_DENIED" || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "not today") {
		t.Fatalf("denied: %v", structured(t, res))
	}
	if recv.total.Load() != 1 {
		t.Fatal("a denied call ran")
	}
}

func TestSeparateApprover(t *testing.T) {
	ctx := context.Background()
	st := memStore(t)
	gw := approvalGateway(t, st, newReceiver(t), ", separate_approver: true")
	res, _ := gw.Call(ctx, "hooks.send", json.RawMessage(`{"payload":1}`), server.CallOptions{})
	_, id := errorCode(t, res)
	if _, err := gw.Decide(ctx, id, true, "local", ""); !errors.Is(err, policy.ErrSelfApproval) {
		t.Fatalf("the caller approved its own request: %v", err)
	}
	if _, err := gw.Decide(ctx, id, true, "someone-else", ""); err != nil {
		t.Fatal(err)
	}
}

func TestInterruptedRunIsFailedNotRepeated(t *testing.T) {
	ctx := context.Background()
	st := memStore(t)
	recv := newReceiver(t)
	gw := approvalGateway(t, st, recv, "")
	res, _ := gw.Call(ctx, "hooks.send", json.RawMessage(`{"payload":1}`), server.CallOptions{})
	_, id := errorCode(t, res)
	gw.Decide(ctx, id, true, "alice", "")
	// A process claimed it and died: its heartbeat is old.
	if won, err := st.Approvals().Claim(ctx, id, time.Now().Add(-time.Hour)); !won || err != nil {
		t.Fatalf("claim: %v %v", won, err)
	}
	gw.Start(ctx)
	waitFor(t, "the interrupted run to be failed", func() bool {
		a, _ := st.Approvals().Get(ctx, id)
		return a.State == store.StateFailed
	})
	if recv.total.Load() != 0 {
		t.Fatal("an interrupted run was run again")
	}
}

func TestConfirmInTheClient(t *testing.T) {
	ctx := context.Background()
	recv := newReceiver(t)
	st := memStore(t)
	cfg, err := config.Parse([]byte(`
approvals: {wait: 5s}
policy:
  rules:
    - {tool: hooks.send, action: approve, confirm: client}
connectors:
  - id: hooks
    type: webhook
    config: {url: "`+recv.url+`", allow_private_networks: true}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(ctx, server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	gw.Start(ctx)
	url := serve(t, gw)

	var asked atomic.Int64
	withElicitation := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			if !strings.Contains(r.Params.Message, "hooks.send") || !strings.Contains(r.Params.Message, `"payload"`) {
				t.Errorf("the question does not show the call: %q", r.Params.Message)
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{policy.ConfirmField: true}}, nil
		},
	})
	cs, err := withElicitation.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hooks__send", Arguments: map[string]any{"payload": "yes"}})
	if err != nil || res.IsError || asked.Load() != 1 || recv.total.Load() != 1 {
		t.Fatalf("confirmed in the client: %v %v, asked %d, delivered %d", res, err, asked.Load(), recv.total.Load())
	}

	// A client without elicitation falls back to the inbox.
	plain := connect(t, url, "2025-11-25")
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, _ := plain.CallTool(cctx, &mcp.CallToolParams{Name: "hooks__send", Arguments: map[string]any{"payload": "inbox"}})
		done <- r
	}()
	var pending *store.Approval
	waitFor(t, "an inbox request", func() bool {
		l, _ := st.Approvals().List(ctx, store.ApprovalFilter{State: store.StatePending, AllTenants: true, Limit: 1})
		if len(l) == 1 {
			pending = l[0]
		}
		return pending != nil
	})
	gw.Decide(ctx, pending.ID, true, "approver", "")
	if r := <-done; r == nil || r.IsError {
		t.Fatalf("inbox fallback: %v", r)
	}
	if recv.total.Load() != 2 {
		t.Fatalf("deliveries %d, want 2", recv.total.Load())
	}
}

func TestMetricsAreExposed(t *testing.T) {
	ctx := context.Background()
	recv := newReceiver(t)
	gw := approvalGateway(t, memStore(t), recv, "")
	url := serve(t, gw)
	gw.Call(ctx, "hooks.send", json.RawMessage(`{"payload":1}`), server.CallOptions{})
	gw.Call(ctx, "http.request", json.RawMessage(`{"url":"http://127.0.0.1:1/"}`), server.CallOptions{})
	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`legate_tool_calls_total{outcome="APPROVAL_PENDING",source="native:hooks",tool="hooks.send"} 1`,
		`legate_tool_calls_total{outcome="PERMISSION_DENIED",source="builtin",tool="http.request"} 1`,
		`legate_policy_decisions_total{action="allow"} 1`,
		`legate_policy_decisions_total{action="approve"} 1`,
		`legate_approvals_pending 1`,
		`legate_tool_call_duration_seconds_bucket{source="native:hooks"`,
		`legate_catalog_tools 5`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestNewRequestsAreNotified(t *testing.T) {
	ctx := context.Background()
	var got atomic.Value
	notifier := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(r.Header.Get("X-Legate-Event") + " " + string(b))
		w.WriteHeader(http.StatusNoContent)
	}))
	defer notifier.Close()
	recv := newReceiver(t)
	cfg, err := config.Parse([]byte(`
approvals: {wait: 10ms, notify: inbox}
connectors:
  - {id: hooks, type: webhook, config: {url: "`+recv.url+`", allow_private_networks: true}}
  - {id: inbox, type: webhook, config: {url: "`+notifier.URL+`", allow_private_networks: true}}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(ctx, server.Options{Config: cfg, Store: memStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	res, _ := gw.Call(ctx, "hooks.send", json.RawMessage(`{"payload":{"amount":42}}`), server.CallOptions{})
	_, id := errorCode(t, res)
	waitFor(t, "the notification", func() bool { return got.Load() != nil })
	body := got.Load().(string)
	for _, want := range []string{"approval.requested {", id, `"hooks.send"`, `"amount":42`, "legate approvals approve " + id} {
		if !strings.Contains(body, want) {
			t.Errorf("notification lacks %s: %s", want, body)
		}
	}
	if recv.total.Load() != 0 {
		t.Fatal("the pending call ran")
	}
}
