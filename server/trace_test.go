package server_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// otlpReceiver is an OTLP/HTTP receiver: it decodes the protobuf export
// requests sent to /v1/traces and keeps their spans.
type otlpReceiver struct {
	url   string
	mu    sync.Mutex
	spans []*tracepb.Span
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	rc := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &req) != nil {
			t.Errorf("OTLP receiver: %s %s (%s), %d bytes not an export request", r.Method, r.URL.Path, r.Header.Get("Content-Type"), len(body))
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				rc.spans = append(rc.spans, ss.Spans...)
			}
		}
		rc.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(srv.Close)
	rc.url = srv.URL
	return rc
}

// named returns the spans called name.
func (rc *otlpReceiver) named(name string) []*tracepb.Span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range rc.spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// children are the spans whose parent is p.
func (rc *otlpReceiver) children(p *tracepb.Span) []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for _, s := range rc.spans {
		if string(s.ParentSpanId) == string(p.SpanId) && string(s.TraceId) == string(p.TraceId) {
			out = append(out, s.Name)
		}
	}
	slices.Sort(out)
	return out
}

// child is the only child of p called name.
func (rc *otlpReceiver) child(t *testing.T, p *tracepb.Span, name string) *tracepb.Span {
	t.Helper()
	var found *tracepb.Span
	for _, s := range rc.named(name) {
		if string(s.ParentSpanId) == string(p.SpanId) && string(s.TraceId) == string(p.TraceId) {
			if found != nil {
				t.Fatalf("%s has two children %q", p.Name, name)
			}
			found = s
		}
	}
	if found == nil {
		t.Fatalf("%s has no child %q; its children: %v", p.Name, name, rc.children(p))
	}
	return found
}

// events are the names of a span's events, and "name.key=value" for each
// of their string attributes.
func events(s *tracepb.Span) []string {
	var out []string
	for _, e := range s.Events {
		out = append(out, e.Name)
		for _, a := range e.Attributes {
			out = append(out, e.Name+"."+a.Key+"="+a.Value.GetStringValue())
		}
	}
	return out
}

func attr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.GetStringValue()
		}
	}
	return ""
}

// traceparents records the traceparent header of each request to h.
type traceparents struct {
	mu   sync.Mutex
	seen []string
	h    http.Handler
}

func (tp *traceparents) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if v := r.Header.Get("Traceparent"); v != "" {
		tp.mu.Lock()
		tp.seen = append(tp.seen, v)
		tp.mu.Unlock()
	}
	tp.h.ServeHTTP(w, r)
}

func (tp *traceparents) all() []string {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return slices.Clone(tp.seen)
}

// headerClient adds a fixed header to every request, as a traced MCP
// client sends its traceparent.
type headerClient struct{ key, value string }

func (h headerClient) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.key, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

// tracedGateway builds a gateway exporting to rc, started unless start is
// false; close sends its last spans.
func tracedGateway(t *testing.T, rc *otlpReceiver, st store.Store, doc string, start bool) (gw *server.Gateway, close func()) {
	t.Helper()
	cfg, err := config.Parse([]byte("telemetry: {otlp_endpoint: \""+rc.url+"\"}\n"+doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	gw, err = server.New(context.Background(), server.Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	close = func() { once.Do(func() { gw.Close() }) }
	t.Cleanup(close)
	if start {
		gw.Start(context.Background())
	}
	return gw, close
}

const (
	callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan  = "00f067aa0ba902b7"
)

// A forwarded upstream call is one span, child of the caller's
// traceparent, with the policy decision and the audit as events and the
// upstream request as a client span under execute; the upstream receives
// that client span as its parent. A shared session's call is relayed by
// Legate's own POST; a per_client session's goes through the go-sdk client.
func TestTraceOfAForwardedCall(t *testing.T) {
	for _, session := range []string{"shared", "per_client"} {
		t.Run(session, func(t *testing.T) { testTraceOfAForwardedCall(t, session) })
	}
}

func testTraceOfAForwardedCall(t *testing.T, session string) {
	rc := newOTLPReceiver(t)
	up := &traceparents{h: upstreamtest.Handler(upstreamtest.NewEchoServer("traced"))}
	upURL := upstreamtest.NewServer(t, up).URL()
	gw, closeGW := tracedGateway(t, rc, memStore(t), allowAll+"upstreams:\n  - id: up\n    url: "+upURL+"\n    session: "+session+"\n", true)
	waitCatalog(t, gw, "mcp.up.echo")

	c := mcp.NewClient(&mcp.Implementation{Name: "traced-client", Version: "1"}, nil)
	hc := &http.Client{Transport: headerClient{"Traceparent", "00-" + callerTrace + "-" + callerSpan + "-01"}}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: serve(t, gw), HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := callText(t, cs, wire("mcp.up.echo"), "hi"); res.IsError {
		t.Fatalf("call failed: %+v", res)
	}
	cs.Close()
	closeGW()

	calls := rc.named("tools/call mcp.up.echo")
	if len(calls) != 1 {
		t.Fatalf("%d spans of the call, want 1", len(calls))
	}
	call := calls[0]
	if hex.EncodeToString(call.TraceId) != callerTrace || hex.EncodeToString(call.ParentSpanId) != callerSpan {
		t.Errorf("call span in trace %x under %x, want the caller's %s under %s", call.TraceId, call.ParentSpanId, callerTrace, callerSpan)
	}
	if call.Kind != tracepb.Span_SPAN_KIND_SERVER || attr(call, "legate.outcome") != "ok" || attr(call, "legate.source") != "upstream:up" || attr(call, "legate.decision") != "allow" {
		t.Errorf("call span: kind %v, attributes %v", call.Kind, call.Attributes)
	}
	ev := events(call)
	for _, want := range []string{"auth", "auth.legate.principal=local", "view", "policy.decision.legate.action=allow", "audit"} {
		if !slices.Contains(ev, want) {
			t.Errorf("call span's events %v lack %s", ev, want)
		}
	}
	if got := rc.children(call); !slices.Equal(got, []string{"execute"}) {
		t.Errorf("the call's children are %v, want [execute]", got)
	}
	req := rc.child(t, rc.child(t, call, "execute"), "HTTP POST")
	if req.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("upstream request span kind %v", req.Kind)
	}
	want := "00-" + callerTrace + "-" + hex.EncodeToString(req.SpanId) + "-01"
	if seen := up.all(); !slices.Contains(seen, want) {
		t.Errorf("the upstream got traceparents %v, want %s", seen, want)
	}
}

// An approved call's span holds the wait for approval, then execute with
// the provider's request under it; the provider receives the trace.
func TestTraceOfAnApprovedCall(t *testing.T) {
	rc := newOTLPReceiver(t)
	hook := &traceparents{h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	})}
	receiver := httptest.NewServer(hook)
	t.Cleanup(receiver.Close)
	st := memStore(t)
	gw, closeGW := tracedGateway(t, rc, st, `
approvals: {wait: 60s}
connectors:
  - id: hooks
    type: webhook
    config: {url: "`+receiver.URL+`/in", allow_private_networks: true, max_attempts: 1}
`, false) // not started: the background executor cannot take the approved request from the waiting call
	ctx := context.Background()
	go func() {
		// The approver, once the request is in the inbox.
		for range 2000 {
			pending, _ := st.Approvals().List(ctx, store.ApprovalFilter{State: store.StatePending, AllTenants: true})
			if len(pending) > 0 {
				gw.Decide(ctx, pending[0].ID, true, "approver", "ok")
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	res, err := gw.Call(ctx, "hooks.send", json.RawMessage(`{"payload":{"order":1}}`), server.CallOptions{})
	if err != nil || res.IsError {
		t.Fatalf("approved call: %v %+v", err, res)
	}
	closeGW()

	calls := rc.named("tools/call hooks.send")
	if len(calls) != 1 {
		t.Fatalf("%d spans of the call, want 1", len(calls))
	}
	call := calls[0]
	if len(call.ParentSpanId) != 0 {
		t.Errorf("a call with no caller's trace has parent %x", call.ParentSpanId)
	}
	if attr(call, "legate.decision") != "approve" || attr(call, "legate.outcome") != "ok" || attr(call, "legate.approval_id") == "" {
		t.Errorf("call span attributes %v", call.Attributes)
	}
	if ev := events(call); !slices.Contains(ev, "policy.decision.legate.action=approve") || !slices.Contains(ev, "audit") {
		t.Errorf("call span's events %v", ev)
	}
	wait := rc.child(t, call, "approval.wait")
	exec := rc.child(t, call, "execute")
	if exec.StartTimeUnixNano < wait.EndTimeUnixNano {
		t.Errorf("execute started before the wait for approval ended")
	}
	post := rc.child(t, exec, "HTTP POST")
	want := "00-" + hex.EncodeToString(call.TraceId) + "-" + hex.EncodeToString(post.SpanId) + "-01"
	if seen := hook.all(); !slices.Equal(seen, []string{want}) {
		t.Errorf("the webhook got traceparents %v, want [%s]", seen, want)
	}
}

// A call over HTTP that needs approval is handed from the fast path to the
// SDK's: both runs' spans are children of the caller's traceparent, the
// first ending handed_back (not an error), the second APPROVAL_PENDING.
func TestTraceOfACallHandedToTheSDK(t *testing.T) {
	rc := newOTLPReceiver(t)
	upURL := upstreamtest.NewHTTP(t, upstreamtest.NewEchoServer("traced"))
	gw, closeGW := tracedGateway(t, rc, memStore(t), "approvals: {wait: 10ms}\npolicy:\n  rules:\n    - {tool: mcp.up.echo, action: approve}\nupstreams:\n  - id: up\n    url: "+upURL+"\n", true)
	waitCatalog(t, gw, "mcp.up.echo")
	c := mcp.NewClient(&mcp.Implementation{Name: "traced-client", Version: "1"}, nil)
	hc := &http.Client{Transport: headerClient{"Traceparent", "00-" + callerTrace + "-" + callerSpan + "-01"}}
	url := serve(t, gw)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	lists := `legate_fast_path_requests_total{method="tools/list"}`
	before := metric(t, url, lists)
	waitFor(t, "the session on the fast path", func() bool {
		cs.ListTools(context.Background(), nil)
		return metric(t, url, lists) > before
	})
	if res, _ := callText(t, cs, wire("mcp.up.echo"), "hi"); resultCode(res) != "APPROVAL_PENDING" {
		t.Fatalf("want APPROVAL_PENDING, got %+v", res)
	}
	cs.Close()
	closeGW()

	var outcomes []string
	for _, s := range rc.named("tools/call mcp.up.echo") {
		if hex.EncodeToString(s.TraceId) != callerTrace || hex.EncodeToString(s.ParentSpanId) != callerSpan {
			t.Errorf("span in trace %x under %x, want the caller's", s.TraceId, s.ParentSpanId)
		}
		if o := attr(s, "legate.outcome"); o == "handed_back" && s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("the handed-back span has an error status")
		}
		outcomes = append(outcomes, attr(s, "legate.outcome"))
	}
	slices.Sort(outcomes)
	if !slices.Equal(outcomes, []string{"APPROVAL_PENDING", "handed_back"}) {
		t.Fatalf("outcomes of the call's spans: %v", outcomes)
	}
}
