package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
)

// lineSession is a client of a gateway's stdio session, speaking raw lines.
type lineSession struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Reader
}

func openLines(t *testing.T, gw *server.Gateway, fast bool) *lineSession {
	t.Helper()
	s := startLines(t, gw, fast)
	s.exchange(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lines","version":"1"}}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

// startLines is a stdio session not initialized, as a 2026-07-28 client
// leaves it.
func startLines(t *testing.T, gw *server.Gateway, fast bool) *lineSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		server.ServeLines(ctx, gw, inR, outW, fast)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		<-done
	})
	return &lineSession{t: t, in: inW, out: bufio.NewReader(outR)}
}

func (s *lineSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// exchange sends one request and returns the lines it brings, up to and
// including its answer.
func (s *lineSession) exchange(line string) []string {
	s.t.Helper()
	s.send(line)
	var got []string
	for {
		l, err := s.out.ReadString('\n')
		if err != nil {
			s.t.Fatalf("reading the answer to %s: %v (so far %q)", line, err, got)
		}
		got = append(got, l)
		if strings.Contains(l, `"id":`) && !strings.Contains(l, `"method":`) {
			return got
		}
	}
}

// TestStdioFastPathIsTheSDKs: on a stdio session the fast paths answer
// tools/list and native tools' calls with the very bytes the SDK's path
// writes — results, structured content, tool errors, gateway errors,
// JSON-RPC errors, string and number ids — and count what they answer.
func TestStdioFastPathIsTheSDKs(t *testing.T) {
	gw := newGateway(t, testConfig)
	url := serve(t, gw) // for /metrics
	requests := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"e.echo","arguments":{"text":"héllo \"quoted\" \u2028 <b>"}}}`,
		`{"jsonrpc":"2.0","id":"s-4","method":"tools/call","params":{"name":"e.echo","arguments":{"nope":1}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"e.fail","arguments":{"text":"NOT_FOUND"}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"e.boom","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"http.request","arguments":{"url":"http://127.0.0.1:1/"}}}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"legate.approval_status","arguments":{"approval_id":"nope"}}}`,
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"e.echo","arguments":{"text":"x"},"_meta":{"progressToken":"p1"}}}`,
		`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"e.echo"}}`,
		`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"e.echo","arguments":null}}`,
		// Keys in another case are not params or name: read as the SDK reads them.
		`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"e.echo","arguments":{"text":"a"}},"Params":{"name":"e.fail","arguments":{"text":"NOT_FOUND"}}}`,
		`{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"e.echo","NAME":"e.fail","arguments":{"text":"b"}}}`,
		// Not the fast path's: the SDK answers, the same either way.
		`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"no.such_tool","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"e.echo","arguments":[1]}}`,
		`{"jsonrpc":"2.0","id":14,"method":"tools/list","params":{"cursor":"x"}}`,
	}
	fast, sdk := openLines(t, gw, true), openLines(t, gw, false)
	before := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`)
	listBefore := metric(t, url, `legate_fast_path_requests_total{method="tools/list"}`)
	for _, r := range requests {
		f, s := fast.exchange(r), sdk.exchange(r)
		if fmt.Sprint(f) != fmt.Sprint(s) {
			t.Errorf("%s:\nfast path  %q\nthe SDK's  %q", r, f, s)
		}
	}
	if n := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`) - before; n != 11 {
		t.Errorf("%v of the 11 native calls took the stdio fast path", n)
	}
	if n := metric(t, url, `legate_fast_path_requests_total{method="tools/list"}`) - listBefore; n != 2 {
		t.Errorf("%v of the 2 plain lists took the stdio fast path", n)
	}
}

// TestStdioStatelessFastPathIsTheSDKs: a 2026-07-28 client over stdio,
// which never initializes, has its lists and calls answered by the fast
// paths with what the SDK's path writes (stateless results, tool errors,
// progress), once its first request has told the session its protocol; a request without the protocol's _meta, or naming another
// version, stays the SDK's.
func TestStdioStatelessFastPathIsTheSDKs(t *testing.T) {
	up, _ := fastUpstream(t)
	gw, url, _ := fastGateway(t, up.URL(), "")
	fast, sdk := startLines(t, gw, true), startLines(t, gw, false)
	calls := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`)
	lists := metric(t, url, `legate_fast_path_requests_total{method="tools/list"}`)
	// The first request is the SDK's: the session learns its protocol.
	first := `{"jsonrpc":"2.0","id":0,"method":"tools/list","params":{"_meta":` + statelessMeta + `}}`
	if f, s := fast.exchange(first), sdk.exchange(first); fmt.Sprint(f) != fmt.Sprint(s) {
		t.Errorf("first request:\nfast path  %q\nthe SDK's  %q", f, s)
	}
	if n := metric(t, url, `legate_fast_path_requests_total{method="tools/list"}`) - lists; n != 0 {
		t.Errorf("the first request took the fast path")
	}
	taken := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":` + statelessMeta + `}}`,
		callLine("2", "mcp.up.echo", `,"arguments":{"text":"héllo \"quoted\" <b>"},"_meta":`+statelessMeta),
		callLine(`"three"`, "mcp.up.fails", `,"_meta":`+statelessMeta),
		callLine("4", "mcp.up.strict", `,"_meta":`+statelessMeta),
		callLine("5", "mcp.up.slow", `,"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`),
		callLine("10", "legate.approval_status", `,"arguments":{"approval_id":"nope"},"_meta":`+statelessMeta),
		callLine("11", "legate.approval_status", `,"arguments":{"nope":1},"_meta":`+statelessMeta),
	}
	sdkOnly := []string{
		`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{}}`,
		callLine("7", "mcp.up.echo", `,"arguments":{"text":"x"}`),
		callLine("8", "mcp.up.echo", `,"arguments":{"text":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}`),
		callLine("9", "no.such_tool", `,"_meta":`+statelessMeta),
	}
	// Compared as values, as stateless answers over HTTP are: a stateless
	// result's members come in encoding/json's order of a map's keys from
	// the fast path, in the result type's field order from the SDK.
	value := func(line string) string {
		var v any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		b, _ := json.Marshal(v)
		return sameMarks(string(b))
	}
	for _, r := range append(taken, sdkOnly...) {
		f, s := fast.exchange(r), sdk.exchange(r)
		if value(f[len(f)-1]) != value(s[len(s)-1]) {
			t.Errorf("%s:\nfast path  %q\nthe SDK's  %q", r, f, s)
		}
	}
	if n := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`) - calls; n != 6 {
		t.Errorf("%v of the 6 stateless calls took the stdio fast path", n)
	}
	if n := metric(t, url, `legate_fast_path_requests_total{method="tools/list"}`) - lists; n != 1 {
		t.Errorf("%v of the 1 stateless list took the stdio fast path", n)
	}
}

// callLine is a tools/call line for the tool canonical.
func callLine(id, canonical, params string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + wire(canonical) + `"` + params + `}}`
}

// On a stdio session, an upstream's calls are relayed as bytes as over
// HTTP: the same lines as the SDK's path, progress first; cancelled by the
// client's notification, with no answer; held for approval, handed back to
// the SDK and decided once.
func TestStdioFastPathRelaysUpstreams(t *testing.T) {
	up, w := fastUpstream(t)
	gw, url, st := fastGateway(t, up.URL(), "approvals: {wait: 10ms}\npolicy:\n  rules:\n    - {tool: mcp.up.add, action: approve}\n")
	fast, sdk := openLines(t, gw, true), openLines(t, gw, false)
	calls := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`)
	for i, r := range []string{
		callLine("1", "mcp.up.echo", `,"arguments":{"text":"héllo"}`),
		callLine(`"two"`, "mcp.up.fails", ""),
		callLine("3", "mcp.up.strict", ""),
		callLine("4", "mcp.up.slow", `,"_meta":{"progressToken":7}`),
	} {
		// How many progress notifications slow sends depends on the
		// clock: the answers are compared, and the progress's presence.
		f, s := fast.exchange(r), sdk.exchange(r)
		if sameMarks(f[len(f)-1]) != sameMarks(s[len(s)-1]) {
			t.Errorf("call %d, %s:\nfast path  %q\nthe SDK's  %q", i+1, r, f, s)
		}
		if i == 3 && (len(f) < 2 || !strings.HasPrefix(f[0], `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,`)) {
			t.Errorf("slow's progress was not relayed: %q", f)
		}
	}
	if n := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`) - calls; n != 4 {
		t.Errorf("%v of 4 relayed calls took the stdio fast path", n)
	}

	// Cancelled: the upstream's work ends and no answer comes; the next
	// request's answer is the next line.
	fast.send(callLine(`"c-1"`, "mcp.up.waits", ""))
	select {
	case <-w.started:
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not reach the upstream")
	}
	fast.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c-1","reason":"user"}}`)
	select {
	case <-w.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream's work was not cancelled")
	}
	if got := fast.exchange(`{"jsonrpc":"2.0","id":"after","method":"ping"}`); len(got) != 1 || !strings.Contains(got[0], `"id":"after"`) {
		t.Fatalf("after a cancelled call: %q", got)
	}

	// Held for approval: the SDK's path answers, and decides once.
	approvals := `legate_policy_decisions_total{action="approve"}`
	before, calls := metric(t, url, approvals), metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`)
	got := fast.exchange(callLine("9", "mcp.up.add", `,"arguments":{"A":1,"B":2}`))
	if len(got) != 1 || !strings.Contains(got[0], "APPROVAL_PENDING") {
		t.Fatalf("a held call: %q", got)
	}
	if n := metric(t, url, approvals) - before; n != 1 {
		t.Errorf("%v approve decisions for 1 call", n)
	}
	if n := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`) - calls; n != 0 {
		t.Errorf("a held call counted %v times as the fast path's", n)
	}
	var rows []store.AuditRow
	waitFor(t, "the audit row", func() bool {
		rows, _ = st.Audit().Query(context.Background(), store.AuditQuery{Tool: "mcp.up.add"})
		return len(rows) >= 1
	})
	if len(rows) != 1 || rows[0].Decision != "approve" {
		t.Errorf("audit rows %+v", rows)
	}
}

// A client that writes its requests and closes its input is owed an answer
// to each, the fast path's included.
func TestStdioFastPathAnswersAfterTheInputEnds(t *testing.T) {
	up, _ := fastUpstream(t)
	gw, url, _ := fastGateway(t, up.URL(), "")
	s := openLines(t, gw, true)
	calls := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`)
	s.send(callLine("1", "mcp.up.slow", ""))
	s.send(callLine("2", "mcp.up.echo", `,"arguments":{"text":"x"}`))
	s.in.Close()
	rest, err := io.ReadAll(s.out)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{`"id":1,`, `"id":2,`} {
		if !strings.Contains(string(rest), id) {
			t.Errorf("no answer with %s in %s", id, rest)
		}
	}
	if n := metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`) - calls; n != 2 {
		t.Errorf("%v of 2 calls took the stdio fast path", n)
	}
}
