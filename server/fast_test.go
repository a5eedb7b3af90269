package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// sseMessages reads the JSON-RPC messages of an event-stream response.
func sseMessages(t *testing.T, resp *http.Response) [][]byte {
	t.Helper()
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, ct, b)
	}
	var out [][]byte
	var data []byte
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0 && len(data) > 0:
			out = append(out, data)
			data = nil
		case bytes.HasPrefix(line, []byte("data: ")):
			data = append(data, line[len("data: "):]...)
		}
	}
	return out
}

// metric reads one series of the gateway serving url (its /mcp), 0 if absent.
func metric(t *testing.T, url, series string) float64 {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

// fastUpstream is a go-sdk upstream whose tools cover what a relayed call
// may meet: text, structured content, a tool's own failure, a JSON-RPC
// error, progress, a ping to the client mid-call, and work that waits to be
// cancelled (w tells when it starts and when it is cancelled).
func fastUpstream(t *testing.T) (srv *upstreamtest.Server, w waits) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "fast", Version: "1"}, nil)
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	upstreamtest.AddEcho(s, "echo")
	upstreamtest.AddSlow(s, "slow", 300*time.Millisecond, 50*time.Millisecond)
	type out struct {
		Sum int `json:"sum"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add", Annotations: ro}, func(_ context.Context, _ *mcp.CallToolRequest, in struct{ A, B int }) (*mcp.CallToolResult, out, error) {
		return nil, out{Sum: in.A + in.B}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fails", Annotations: ro}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("it failed")
	})
	s.AddTool(&mcp.Tool{Name: "strict", Annotations: ro, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "strict refuses"}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pings", Annotations: ro}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		if err := req.Session.Ping(ctx, nil); err != nil {
			return nil, nil, fmt.Errorf("ping: %w", err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pinged"}}}, nil, nil
	})
	started, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
	mcp.AddTool(s, &mcp.Tool{Name: "waits", Annotations: ro}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			cancelled <- struct{}{}
			return nil, nil, ctx.Err()
		case <-time.After(20 * time.Second):
			return nil, nil, errors.New("never cancelled")
		}
	})
	return upstreamtest.NewHTTPServer(t, s), waits{started, cancelled}
}

// waits tells of the calls of fastUpstream's tool waits: a value on
// started when one begins, on cancelled when one is cancelled.
type waits struct{ started, cancelled <-chan struct{} }

// fastGateway serves a gateway over the fast upstream and returns its URL
// and store.
func fastGateway(t *testing.T, upURL, policyDoc string) (*server.Gateway, string, *sqlite.Store) {
	t.Helper()
	st := upFileStore(t, t.TempDir())
	gw := upGateway(t, "upstreams:\n  - id: up\n    url: "+upURL+"\n"+policyDoc, st, nil)
	waitCatalog(t, gw, "mcp.up.echo", "mcp.up.waits")
	return gw, serve(t, gw), st
}

// fastSession opens a stateful session and waits until the fast paths
// serve it.
func fastSession(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	cs, _ := upClient(t, url)
	before := metric(t, url, `legate_fast_path_requests_total{method="tools/list"}`)
	waitFor(t, "the session on the fast path", func() bool {
		cs.ListTools(context.Background(), nil)
		return metric(t, url, `legate_fast_path_requests_total{method="tools/list"}`) > before
	})
	return cs
}

// A relayed call answers exactly what the SDK path answers, for every kind
// of result, and is audited like any call.
func TestFastCallMatchesTheSDK(t *testing.T) {
	up, _ := fastUpstream(t)
	_, url, st := fastGateway(t, up.URL(), "")
	fast := fastSession(t, url)
	stateless := connect(t, url, "2026-07-28") // no session
	ctx := context.Background()

	calls := []struct {
		tool string
		args map[string]any
	}{
		{"echo", map[string]any{"text": "héllo \"quoted\" \u2028"}},
		{"add", map[string]any{"A": 2, "B": 3}},
		{"fails", nil},
		{"strict", nil},
		{"pings", nil},
		{"slow", nil},
	}
	direct := connect(t, up.URL(), "2025-11-25")
	callsBefore := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`)
	for _, c := range calls {
		p := &mcp.CallToolParams{Name: wire("mcp.up." + c.tool), Arguments: c.args}
		fr, ferr := fast.CallTool(ctx, p)
		sr, serr := stateless.CallTool(ctx, p)
		dr, derr := direct.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if sr != nil {
			// What a stateless answer adds.
			if info, _ := sr.Meta["io.modelcontextprotocol/serverInfo"].(map[string]any); info["name"] != "legate" {
				t.Errorf("%s: a stateless result names the server %v", c.tool, sr.Meta)
			}
			delete(sr.Meta, "io.modelcontextprotocol/serverInfo")
			if len(sr.Meta) == 0 {
				sr.Meta = nil
			}
		}
		if ferr == nil && serr == nil {
			unmarked(t, fr)
			unmarked(t, sr)
		}
		fb, _ := json.Marshal(fr)
		sb, _ := json.Marshal(sr)
		db, _ := json.Marshal(dr)
		if sr != nil {
			// And that it is complete: compared without it.
			var m map[string]any
			json.Unmarshal(sb, &m)
			if m["resultType"] != "complete" {
				t.Errorf("%s: a stateless result's resultType is %v", c.tool, m["resultType"])
			}
			fb, sb, db = withoutResultType(fb), withoutResultType(sb), withoutResultType(db)
		}
		if string(fb) != string(db) || string(sb) != string(db) || rpcCode(ferr) != rpcCode(derr) || rpcCode(serr) != rpcCode(derr) {
			t.Errorf("%s: relayed on a session %s (%v), stateless %s (%v), from the upstream %s (%v)", c.tool, fb, ferr, sb, serr, db, derr)
		}
		if c.tool == "strict" && rpcCode(ferr) != jsonrpc.CodeInvalidParams {
			t.Errorf("strict: the upstream's JSON-RPC error was not relayed: %s %v", fb, ferr)
		}
	}
	// The session's calls and the stateless ones.
	if n := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`) - callsBefore; n != float64(2*len(calls)) {
		t.Fatalf("%v of %d calls took the fast path", n, 2*len(calls))
	}

	// Audited: outcome and result size as for any call.
	var rows []store.AuditRow
	waitFor(t, "the audit rows", func() bool {
		var err error
		rows, err = st.Audit().Query(ctx, store.AuditQuery{Tool: "mcp.up.echo"})
		return err == nil && len(rows) == 2
	})
	for _, r := range rows {
		if r.Outcome != "ok" || r.ResultSize != len("héllo \"quoted\" \u2028") || r.Session == "" && r == rows[0] {
			t.Errorf("audit row %+v", r)
		}
	}
	rows, _ = st.Audit().Query(ctx, store.AuditQuery{Tool: "mcp.up.fails"})
	if len(rows) != 2 || rows[0].Outcome != "TOOL_ERROR" || rows[1].Outcome != "TOOL_ERROR" {
		t.Errorf("fails audit rows %+v", rows)
	}
}

// withoutResultType is a result's JSON without its resultType, its keys
// sorted.
func withoutResultType(b []byte) []byte {
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return b
	}
	delete(m, "resultType")
	out, _ := json.Marshal(m)
	return out
}

// rpcCode is the code of a JSON-RPC error, 0 for none.
func rpcCode(err error) int64 {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// postOn sends a JSON-RPC message on a session, as a client would.
func postOn(t *testing.T, url, sid, body string) *http.Response {
	t.Helper()
	return post(t, url, sid, "application/json, text/event-stream", body)
}

// exchange is one JSON-RPC request sent as an MCP client sends it, on
// session sid or, with sid "", stateless (protocol 2026-07-28), and what
// came back: the status, the Content-Type and each message, re-encoded so
// that messages compare as values (the order of keys may differ).
type exchange struct {
	status int
	ctype  string
	msgs   []string
}

func exchangeOn(t *testing.T, url, sid, id, method, name string, params map[string]any) exchange {
	t.Helper()
	if sid == "" {
		params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid == "" {
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	} else {
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	x := exchange{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type")}
	var raw [][]byte
	if x.ctype == "text/event-stream" {
		raw = sseMessages(t, resp)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		raw = [][]byte{b}
	}
	for _, m := range raw {
		var v any
		if err := json.Unmarshal(m, &v); err != nil {
			t.Fatalf("%s %s: %s: %v", method, name, m, err)
		}
		b, _ := json.Marshal(v)
		x.msgs = append(x.msgs, string(b))
	}
	return x
}

// Progress the upstream reports reaches the client on the call's own
// stream, under the client's token, before the answer.
func TestFastCallRelaysProgressFirst(t *testing.T) {
	up, _ := fastUpstream(t)
	_, url, _ := fastGateway(t, up.URL(), "")
	sid := fastSession(t, url).ID()
	before := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`)
	msgs := sseMessages(t, postOn(t, url, sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"`+wire("mcp.up.slow")+`","arguments":{},"_meta":{"progressToken":"tok-1"}}}`))
	if metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`) != before+1 {
		t.Fatal("the call did not take the fast path")
	}
	if len(msgs) < 3 {
		t.Fatalf("want progress then the answer, got %s", msgs)
	}
	for i, m := range msgs {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProgressToken any     `json:"progressToken"`
				Progress      float64 `json:"progress"`
			} `json:"params"`
			Result *mcp.CallToolResult `json:"result"`
		}
		if err := json.Unmarshal(m, &msg); err != nil {
			t.Fatal(err)
		}
		last := i == len(msgs)-1
		switch {
		case last && (string(msg.ID) != "7" || msg.Result == nil || upstreamtest.Text(msg.Result) != "done"):
			t.Errorf("last message %s is not the answer", m)
		case !last && (msg.Method != "notifications/progress" || msg.Params.ProgressToken != "tok-1" || msg.Params.Progress != float64(i+1)):
			t.Errorf("message %d: %s, want progress %d of tok-1", i, m, i+1)
		}
	}
}

// notifications/cancelled cancels a relayed call at the upstream, and the
// request is left unanswered.
func TestFastCallCancelled(t *testing.T) {
	up, w := fastUpstream(t)
	_, url, _ := fastGateway(t, up.URL(), "")
	sid := fastSession(t, url).ID()
	got := make(chan [][]byte, 1)
	go func() {
		got <- sseMessages(t, postOn(t, url, sid, `{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"`+wire("mcp.up.waits")+`"}}`))
	}()
	// The call is under way once the upstream runs it.
	select {
	case <-w.started:
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not reach the upstream")
	}
	resp := postOn(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c-1","reason":"user"}}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/cancelled: status %d", resp.StatusCode)
	}
	select {
	case <-w.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream's work was not cancelled")
	}
	select {
	case msgs := <-got:
		if len(msgs) != 0 {
			t.Fatalf("a cancelled request was answered: %s", msgs)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call's stream did not end")
	}
}

// A call policy holds for approval goes through the SDK, whose session can
// ask the user.
func TestFastPathLeavesApprovalsToTheSDK(t *testing.T) {
	up, _ := fastUpstream(t)
	_, url, _ := fastGateway(t, up.URL(), "approvals: {wait: 100ms}\npolicy:\n  rules:\n    - {tool: mcp.up.echo, action: approve}\n")
	cs := fastSession(t, url)
	before := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`)
	res, _ := callText(t, cs, wire("mcp.up.echo"), "x")
	if resultCode(res) != "APPROVAL_PENDING" {
		t.Fatalf("want APPROVAL_PENDING, got %s", upstreamtest.Text(res))
	}
	if res, _ := callText(t, cs, wire("mcp.up.slow"), "x"); res.IsError {
		t.Fatalf("slow: %s", upstreamtest.Text(res))
	}
	if n := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`) - before; n != 1 {
		t.Fatalf("%v calls took the fast path, want 1 (slow)", n)
	}
}

// A call the fast path hands back for approval, on a session or stateless,
// is decided and audited once: by the SDK's run of it, not by the attempt.
func TestFastPathHandsApprovalsBackOnce(t *testing.T) {
	up, _ := fastUpstream(t)
	_, url, st := fastGateway(t, up.URL(), "approvals: {wait: 10ms}\npolicy:\n  rules:\n    - {tool: mcp.up.echo, action: approve}\n")
	approvals := `legate_policy_decisions_total{action="approve"}`
	before := metric(t, url, approvals)
	for _, cs := range []*mcp.ClientSession{fastSession(t, url), connect(t, url, "2026-07-28")} {
		if res, _ := callText(t, cs, wire("mcp.up.echo"), "x"); resultCode(res) != "APPROVAL_PENDING" {
			t.Fatalf("want APPROVAL_PENDING, got %s", upstreamtest.Text(res))
		}
	}
	if n := metric(t, url, approvals) - before; n != 2 {
		t.Errorf("%v approve decisions for 2 calls", n)
	}
	ctx := context.Background()
	var rows []store.AuditRow
	waitFor(t, "the audit rows", func() bool {
		rows, _ = st.Audit().Query(ctx, store.AuditQuery{Tool: "mcp.up.echo"})
		return len(rows) >= 2
	})
	for _, r := range rows {
		if r.Decision != "approve" || r.Outcome != "APPROVAL_PENDING" || r.ApprovalID == "" {
			t.Errorf("audit row %+v", r)
		}
	}
	// A later call's row is written after any the first calls left.
	callText(t, fastSession(t, url), wire("mcp.up.slow"), "x")
	waitFor(t, "the later row", func() bool {
		later, _ := st.Audit().Query(ctx, store.AuditQuery{Tool: "mcp.up.slow"})
		return len(later) == 1
	})
	if rows, _ = st.Audit().Query(ctx, store.AuditQuery{Tool: "mcp.up.echo"}); len(rows) != 2 {
		t.Errorf("%d audit rows for 2 calls: %+v", len(rows), rows)
	}
}

// An upstream that restarted has forgotten Legate's session: the call is
// sent again on a new one.
func TestFastCallAfterUpstreamRestart(t *testing.T) {
	up, _ := fastUpstream(t)
	_, url, _ := fastGateway(t, up.URL(), "")
	cs := fastSession(t, url)
	if res, _ := callText(t, cs, wire("mcp.up.echo"), "one"); upstreamtest.Text(res) != "one" {
		t.Fatalf("first call: %s", upstreamtest.Text(res))
	}
	up.Stop()
	// As a real restart takes a moment: Legate's idle connections to the
	// old process see it close.
	time.Sleep(200 * time.Millisecond)
	again := mcp.NewServer(&mcp.Implementation{Name: "fast", Version: "2"}, nil)
	upstreamtest.AddEcho(again, "echo")
	upstreamtest.CloseSessionsAtCleanup(t, again)
	up.Start(upstreamtest.Handler(again))
	if res, _ := callText(t, cs, wire("mcp.up.echo"), "two"); upstreamtest.Text(res) != "two" {
		t.Fatalf("after the restart: %s", upstreamtest.Text(res))
	}
}

// A session the client ended is no longer served, fast or not.
func TestFastPathForgetsDeletedSessions(t *testing.T) {
	up, _ := fastUpstream(t)
	_, url, _ := fastGateway(t, up.URL(), "")
	sid := fastSession(t, url).ID()
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp = postOn(t, url, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+wire("mcp.up.echo")+`","arguments":{"text":"x"}}}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a call on a deleted session: status %d, want 404", resp.StatusCode)
	}
}

// A session busy with calls the fast path answers (which the SDK never
// sees) is not closed as idle; one left alone is.
func TestFastPathKeepsBusySessionsAlive(t *testing.T) {
	up, _ := fastUpstream(t)
	_, url, _ := fastGateway(t, up.URL(), "session_idle_timeout: 1s\n")
	busy := fastSession(t, url)
	idle := fastSession(t, url)
	before := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`)
	calls := 0
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if res, _ := callText(t, busy, wire("mcp.up.echo"), "x"); upstreamtest.Text(res) != "x" {
			t.Fatalf("a busy session's call: %s", upstreamtest.Text(res))
		}
		calls++
	}
	if n := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`) - before; n < float64(calls)/2 {
		t.Fatalf("%v of %d calls took the fast path", n, calls)
	}
	// The SDK, which answers ping, still holds the busy session.
	if err := busy.Ping(context.Background(), nil); err != nil {
		t.Fatalf("the busy session is gone: %v", err)
	}
	resp := postOn(t, url, idle.ID(), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+wire("mcp.up.echo")+`","arguments":{"text":"x"}}}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a call on a session idle past the timeout: status %d, want 404", resp.StatusCode)
	}
}

// On the wire, a relayed call's answer is the one the SDK gives for the same
// call to the same upstream reached through a per_client session (which
// the fast path leaves to the SDK): same status, same framing, same message,
// on a session and stateless.
func TestFastAnswersAreTheSDKs(t *testing.T) {
	up, _ := fastUpstream(t)
	gw := upGateway(t, "upstreams:\n  - {id: up, url: "+up.URL()+"}\n  - {id: pc, url: "+up.URL()+", session: per_client}\n", memStore(t), nil)
	waitCatalog(t, gw, "mcp.up.echo", "mcp.pc.echo")
	url := serve(t, gw)
	sid := fastSession(t, url).ID()

	send := func(id, tool, args string, stateless bool) exchange {
		var params map[string]any
		if err := json.Unmarshal([]byte(`{"name":"`+wire(tool)+`","arguments":`+args+`}`), &params); err != nil {
			t.Fatal(err)
		}
		on := sid
		if stateless {
			on = ""
		}
		return exchangeOn(t, url, on, id, "tools/call", wire(tool), params)
	}
	for _, stateless := range []bool{false, true} {
		for i, c := range []struct{ tool, args string }{
			{"echo", `{"text":"a\u00e9\"b"}`}, {"add", `{"A":1,"B":2}`}, {"fails", `{}`}, {"strict", `{}`}, {"echo", `{"nope":1}`},
		} {
			before := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`)
			id := strconv.Itoa(100 + i)
			fast := send(id, "mcp.up."+c.tool, c.args, stateless)
			if metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`) != before+1 {
				t.Fatalf("%s (stateless %v) did not take the fast path", c.tool, stateless)
			}
			sdk := send(id, "mcp.pc."+c.tool, c.args, stateless)
			if sameMarks(fmt.Sprint(fast)) != sameMarks(fmt.Sprint(sdk)) {
				t.Errorf("%s %s (stateless %v):\nrelayed     %+v\nby the SDK  %+v", c.tool, c.args, stateless, fast, sdk)
			}
		}
	}
}

// A legacy SSE upstream (one event stream for every request) goes through
// the SDK; its progress still reaches the client before the answer.
func TestLegacySSEUpstreamProgressComesFirst(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "legacy", Version: "1"}, nil)
	upstreamtest.AddSlow(s, "slow", 300*time.Millisecond, 50*time.Millisecond)
	upstreamtest.CloseSessionsAtCleanup(t, s)
	up := upstreamtest.NewServer(t, mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
	gw := upGateway(t, "upstreams:\n  - {id: legacy, url: "+up.URL()+", transport: sse}\n", memStore(t), nil)
	waitCatalog(t, gw, "mcp.legacy.slow")
	url := serve(t, gw)
	sid := fastSession(t, url).ID()
	for range 3 {
		msgs := sseMessages(t, postOn(t, url, sid, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"`+wire("mcp.legacy.slow")+`","arguments":{},"_meta":{"progressToken":7}}}`))
		if len(msgs) < 3 {
			t.Fatalf("want progress then the answer, got %s", msgs)
		}
		for i, m := range msgs {
			last := i == len(msgs)-1
			if isAnswer := strings.Contains(string(m), `"id":9`); isAnswer != last || !last && !strings.Contains(string(m), `"progressToken":7`) {
				t.Fatalf("message %d of %d: %s", i+1, len(msgs), m)
			}
		}
	}
}

// A tools/list the fast path answers is the SDK's answer, on a session and
// stateless. (The gateway has one page of tools and answers a list with a
// cursor through the SDK, with every tool.)
func TestFastListIsTheSDKs(t *testing.T) {
	up, _ := fastUpstream(t)
	_, url, _ := fastGateway(t, up.URL(), "")
	sid := fastSession(t, url).ID()
	list := func(stateless bool, cursor string) exchange {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		on := sid
		if stateless {
			on = ""
		}
		return exchangeOn(t, url, on, "l", "tools/list", "", params)
	}
	for _, stateless := range []bool{false, true} {
		before := metric(t, url, `legate_fast_path_requests_total{method="tools/list"}`)
		fast := list(stateless, "")
		if metric(t, url, `legate_fast_path_requests_total{method="tools/list"}`) != before+1 {
			t.Fatalf("stateless %v: the list did not take the fast path", stateless)
		}
		sdk := list(stateless, "x")
		if metric(t, url, `legate_fast_path_requests_total{method="tools/list"}`) != before+1 {
			t.Fatalf("stateless %v: the list with a cursor took the fast path", stateless)
		}
		if fmt.Sprint(fast) != fmt.Sprint(sdk) {
			t.Errorf("stateless %v:\nfast %.400v\nSDK  %.400v", stateless, fast, sdk)
		}
		if len(fast.msgs) != 1 || !strings.Contains(fast.msgs[0], `"cacheScope":"private"`) || stateless != strings.Contains(fast.msgs[0], `"resultType":"complete"`) {
			t.Errorf("stateless %v: %.400v", stateless, fast)
		}
	}
}

// A native tool's call on the fast path answers what the SDK's path
// answers (structured results, output schemas, gateway and tool errors),
// on a session and stateless.
func TestFastNativeCallMatchesTheSDK(t *testing.T) {
	gw := newGateway(t, testConfig)
	url := serve(t, gw)
	fast := fastSession(t, url)
	stateless := connect(t, url, "2026-07-28")
	ctx := context.Background()
	sdk, err := server.SDKClient(ctx, gw)
	if err != nil {
		t.Fatal(err)
	}
	defer sdk.Close()
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"e.echo", map[string]any{"text": "héllo \"quoted\" \u2028"}},
		{"e.echo", map[string]any{"nope": 1}},
		{"e.fail", map[string]any{"text": "NOT_FOUND"}},
		{"e.boom", map[string]any{"text": "x"}},
		{"http.request", map[string]any{"url": "http://127.0.0.1:1/"}},
		{"legate.approval_status", map[string]any{"approval_id": "nope"}},
	}
	before := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`)
	for _, c := range calls {
		p := &mcp.CallToolParams{Name: wire(c.tool), Arguments: c.args}
		fr, ferr := fast.CallTool(ctx, p)
		sr, serr := stateless.CallTool(ctx, p)
		dr, derr := sdk.CallTool(ctx, p) // at the client's default protocol, 2026-07-28
		for _, r := range []*mcp.CallToolResult{sr, dr} {
			if r != nil { // what a 2026-07-28 result adds: compared without it
				delete(r.Meta, "io.modelcontextprotocol/serverInfo")
				if len(r.Meta) == 0 {
					r.Meta = nil
				}
			}
		}
		// Marked alike (the time it was fetched may differ): compared without.
		if fm, sm, dm := unmark(fr), unmark(sr), unmark(dr); fm != dm || sm != dm {
			t.Errorf("%s: provenance on a session %v, stateless %v, on the SDK's path %v", c.tool, fm, sm, dm)
		}
		fb, _ := json.Marshal(fr)
		sb, _ := json.Marshal(sr)
		db, _ := json.Marshal(dr)
		fb, sb, db = withoutResultType(fb), withoutResultType(sb), withoutResultType(db)
		if string(fb) != string(db) || string(sb) != string(db) || rpcCode(ferr) != rpcCode(derr) || rpcCode(serr) != rpcCode(derr) {
			t.Errorf("%s %v:\nfast, session    %s (%v)\nfast, stateless  %s (%v)\nthe SDK's path   %s (%v)", c.tool, c.args, fb, ferr, sb, serr, db, derr)
		}
	}
	if n := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`) - before; n != float64(2*len(calls)) {
		t.Fatalf("%v of %d native calls took the fast path", n, 2*len(calls))
	}
}

// Every error result the gateway makes has its details in
// _meta["io.legate/error"], whether the tool declares an output schema or
// not, on the fast path, the SDK's and a direct call: the one place a client
// can read them for any tool. A tool without an output schema has them in
// structuredContent.error too; one with an output schema does not.
func TestErrorDetailsAreInMetaForEveryTool(t *testing.T) {
	gw := newGateway(t, testConfig)
	url := serve(t, gw)
	ctx := context.Background()
	sdk, err := server.SDKClient(ctx, gw)
	if err != nil {
		t.Fatal(err)
	}
	defer sdk.Close()
	fast := fastSession(t, url)
	calls := []struct {
		tool   string
		args   string
		schema bool // the tool declares an output schema
	}{
		{"e.fail", `{"text":"NOT_FOUND"}`, false},
		{"e.echo", `{"nope":1}`, true},
	}
	for _, c := range calls {
		var args map[string]any
		json.Unmarshal([]byte(c.args), &args)
		p := &mcp.CallToolParams{Name: wire(c.tool), Arguments: args}
		fr, ferr := fast.CallTool(ctx, p)
		dr, derr := sdk.CallTool(ctx, p)
		cr, cerr := gw.Call(ctx, c.tool, json.RawMessage(c.args), server.CallOptions{})
		for path, r := range map[string]*mcp.CallToolResult{"fast path": fr, "SDK's path": dr, "direct call": cr} {
			if ferr != nil || derr != nil || cerr != nil || r == nil || !r.IsError {
				t.Fatalf("%s on the %s: %v %v %v %+v", c.tool, path, ferr, derr, cerr, r)
			}
			text := r.Content[0].(*mcp.TextContent).Text
			meta, _ := r.Meta[server.ErrorMetaKey].(map[string]any)
			if meta == nil || meta["code"] == nil || !strings.HasPrefix(text, fmt.Sprint(meta["code"])+": ") {
				t.Errorf("%s on the %s: _meta %v, text %q; want the error's code and message in _meta[%q]", c.tool, path, r.Meta, text, server.ErrorMetaKey)
				continue
			}
			inContent, _ := structured(t, r)["error"].(map[string]any)
			switch {
			case c.schema && r.StructuredContent != nil:
				t.Errorf("%s on the %s: structured content %v, which the output schema does not allow", c.tool, path, r.StructuredContent)
			case !c.schema && (inContent == nil || fmt.Sprint(inContent) != fmt.Sprint(meta)):
				t.Errorf("%s on the %s: structuredContent.error %v; want %v", c.tool, path, inContent, meta)
			}
		}
	}
}
