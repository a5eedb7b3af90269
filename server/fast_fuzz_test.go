package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/server/servertest"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// FuzzFastEnvelope sends any request body (and, stateless, any Mcp-Method
// and Mcp-Name headers) to two gateways over the same upstream: one whose
// calls the fast path relays (a shared session), one whose calls only the
// SDK answers (per_client). The fast path reads the JSON-RPC envelope
// itself; whatever it takes, it must answer as the SDK does — same status,
// framing and messages — and what it leaves to the SDK is the SDK's answer
// on both. A name or arguments read differently would answer differently.
// A session keeps what one message leaves for another (a cancellation
// that came before its call is kept for the call), which the SDK does not:
// an input that may leave it goes on a session of its own, as a client's
// first message, so that one input's leavings never answer another's;
// the rest share one session.
func FuzzFastEnvelope(f *testing.F) {
	call := func(id, name, args string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
	}
	echo := wire("mcp.up.echo")
	for _, s := range []struct {
		body      string
		stateless bool
		method    string
		name      string
	}{
		{call("1", echo, `{"text":"hi"}`), false, "", ""},
		{call(`"a"`, echo, `{"text":"a\u00e9\"b\\/"}`), false, "", ""},
		{call("-2.5e3", wire("mcp.up.add"), `{"A":1,"B":2}`), false, "", ""},
		{call("3", wire("mcp.up.fails"), `{}`), false, "", ""},
		{call("4", wire("mcp.up.strict"), `null`), false, "", ""},
		{call("5", echo, `[1]`), false, "", ""},
		{call("6", "mcp.up.echo", `{"text":1}`), false, "", ""},
		{call("null", echo, `{}`), false, "", ""},
		{call("{}", echo, `{}`), false, "", ""},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + echo + `","arguments":{"text":"x"},"name":"nope"}}`, false, "", ""},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"` + echo + `","_meta":{"progressToken":"p"}}}`, false, "", ""},
		{`{"jsonrpc":"1.0","id":9,"method":"tools/call","params":{"name":"` + echo + `"}}`, false, "", ""},
		{`{"jsonrpc":"2.0","id":10,"method":"tools/list"}`, false, "", ""},
		{`{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{"cursor":""}}`, false, "", ""},
		{`[{"jsonrpc":"2.0","id":12,"method":"tools/list"}]`, false, "", ""},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, false, "", ""},
		{`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"` + echo + `","arguments":{"text":"s"},"_meta":` + statelessMeta + `}}`, true, "tools/call", echo},
		{`{"jsonrpc":"2.0","id":14,"method":"tools/list","params":{"_meta":` + statelessMeta + `}}`, true, "tools/list", ""},
		{`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"` + echo + `","_meta":` + statelessMeta + `}}`, true, "tools/call", "other"},
		{`{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"` + echo + `"}}`, true, "tools/call", echo},
		{`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"` + echo + `","_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}}}`, false, "", ""},
		{`{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"` + echo + `","_meta":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}}`, false, "", ""},
		{"not json", false, "", ""},
	} {
		f.Add([]byte(s.body), s.stateless, s.method, s.name)
	}
	fast, sdk := newEnvelopePair(f)
	f.Fuzz(func(t *testing.T, body []byte, stateless bool, method, name string) {
		if !validHeader(method) || !validHeader(name) {
			return // net/http refuses to send them
		}
		// A result's provenance says when it was fetched: compared without.
		a := sameMarks(fast.send(t, body, stateless, method, name))
		b := sameMarks(sdk.send(t, body, stateless, method, name))
		if a != b {
			t.Fatalf("%s (stateless %v, Mcp-Method %q, Mcp-Name %q)\nfast path gateway: %s\nSDK gateway:       %s", body, stateless, method, name, a, b)
		}
	})
}

// statelessMeta is the _meta of a stateless (2026-07-28) request.
const statelessMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// envelopeGateway is a gateway serving an upstream.
type envelopeGateway struct {
	url, sid string // sid: the session the inputs that leave nothing share
	hc       *http.Client
}

// newEnvelopePair starts the fuzz target's upstream and its two gateways,
// and checks that the first relays calls on the fast path and the second
// never does (else the comparison would prove nothing).
func newEnvelopePair(tb testing.TB) (fast, sdk *envelopeGateway) {
	s := mcp.NewServer(&mcp.Implementation{Name: "envelope", Version: "1"}, nil)
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	upstreamtest.AddEcho(s, "echo")
	type sum struct {
		Sum int `json:"sum"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add", Annotations: ro}, func(_ context.Context, _ *mcp.CallToolRequest, in struct{ A, B int }) (*mcp.CallToolResult, sum, error) {
		return nil, sum{in.A + in.B}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fails", Annotations: ro}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("it failed")
	})
	s.AddTool(&mcp.Tool{Name: "strict", Annotations: ro, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "strict refuses"}
		})
	up := upstreamtest.NewHTTPServer(tb, s)
	fast = startEnvelopeGateway(tb, "upstreams:\n  - {id: up, url: "+up.URL()+"}\n")
	sdk = startEnvelopeGateway(tb, "upstreams:\n  - {id: up, url: "+up.URL()+", session: per_client}\n")
	probe := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + wire("mcp.up.echo") + `","arguments":{"text":"x"}}}`)
	series := `legate_fast_path_requests_total{method="tools/call"}`
	// The fast path takes a session's calls once the gateway's session
	// with the upstream is up: until then the SDK answers them (as it
	// answers every call of the other gateway), so the first probes may
	// not be taken.
	took := func(g *envelopeGateway) bool {
		before := g.metric(tb, series)
		if got := g.send(tb, probe, false, "", ""); !bytes.Contains([]byte(got), []byte(`"text":"x"`)) {
			tb.Fatalf("the probe call failed: %s", got)
		}
		return g.metric(tb, series) > before
	}
	upstreamtest.Eventually(tb, 10*time.Second, func() bool { return took(fast) }, "the fast path never took a call")
	if took(sdk) {
		tb.Fatal("the per_client gateway's call took the fast path")
	}
	return fast, sdk
}

// startEnvelopeGateway serves a gateway from a config document (every
// class allowed; sessions never idle out during a long fuzz run).
func startEnvelopeGateway(tb testing.TB, doc string) *envelopeGateway {
	// A long fuzz run logs nothing.
	sg := servertest.Start(tb, allowAll+"session_idle_timeout: 24h\n"+doc, servertest.With(func(o *server.Options) { o.Logger = slog.New(slog.DiscardHandler) }))
	gw := sg.GW
	upstreamtest.Eventually(tb, 10*time.Second, func() bool {
		_, ok := gw.Catalog().Lookup("mcp.up.strict")
		return ok
	}, "the catalog never held the upstream's tools")
	g := &envelopeGateway{url: sg.URL + "/mcp", hc: &http.Client{Timeout: 10 * time.Second}}
	g.sid = g.open(tb)
	return g
}

// leaves reports whether body may leave something on its session for a
// later message: it holds a cancellation (encoding/json reads the method
// as the fast path does, escapes and all).
func leaves(body []byte) bool {
	var one struct{ Method string }
	var batch []struct{ Method string }
	if json.Unmarshal(body, &one) == nil {
		return one.Method == "notifications/cancelled"
	}
	if json.Unmarshal(body, &batch) == nil {
		for _, m := range batch {
			if m.Method == "notifications/cancelled" {
				return true
			}
		}
	}
	return false
}

// send posts body as a client would, stateless or on a session — one
// opened for it (and ended after) when it leaves something on it — and
// describes the answer: status, Content-Type and each message, re-encoded
// so that messages compare as values.
func (g *envelopeGateway) send(tb testing.TB, body []byte, stateless bool, method, name string) string {
	h := http.Header{}
	if stateless {
		h.Set("Mcp-Protocol-Version", "2026-07-28")
		h.Set("Mcp-Method", method)
		h.Set("Mcp-Name", name)
	} else {
		sid := g.sid
		if leaves(body) {
			sid = g.open(tb)
			defer func() { g.do(tb, http.MethodDelete, nil, http.Header{"Mcp-Session-Id": {sid}}).Body.Close() }()
		}
		h.Set("Mcp-Protocol-Version", "2025-11-25")
		h.Set("Mcp-Session-Id", sid)
	}
	resp := g.do(tb, http.MethodPost, body, h)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("%s: reading the answer: %v", body, err)
	}
	ctype := resp.Header.Get("Content-Type")
	out := fmt.Sprintf("%d %s", resp.StatusCode, ctype)
	msgs := [][]byte{bytes.TrimSpace(b)}
	if ctype == "text/event-stream" {
		msgs = eventData(b)
	}
	for _, m := range msgs {
		var v any
		if json.Unmarshal(m, &v) == nil {
			m, _ = json.Marshal(v)
		}
		out += " | " + string(m)
	}
	return out
}

// open starts a session as a client does (initialize, then initialized)
// and returns its id.
func (g *envelopeGateway) open(tb testing.TB) string {
	resp := g.do(tb, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`), http.Header{})
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		tb.Fatalf("initialize: %s, session %q", resp.Status, sid)
	}
	h := http.Header{"Mcp-Session-Id": {sid}, "Mcp-Protocol-Version": {"2025-11-25"}}
	g.do(tb, http.MethodPost, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), h).Body.Close()
	return sid
}

// do sends one request to the gateway's endpoint with the headers every
// client request has, and h's.
func (g *envelopeGateway) do(tb testing.TB, method string, body []byte, h http.Header) *http.Response {
	req, err := http.NewRequest(method, g.url, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header = h.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := g.hc.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, body, err)
	}
	return resp
}

// eventData is the data of each event of an event stream.
func eventData(b []byte) [][]byte {
	var out [][]byte
	var data []byte
	for line := range bytes.Lines(b) {
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0 && data != nil:
			out, data = append(out, data), nil
		case bytes.HasPrefix(line, []byte("data: ")):
			data = append(data, line[len("data: "):]...)
		}
	}
	if data != nil {
		out = append(out, data)
	}
	return out
}

// metric reads one series of the gateway's /metrics, 0 if absent.
func (g *envelopeGateway) metric(tb testing.TB, series string) float64 {
	resp, err := http.Get(g.url[:len(g.url)-len("/mcp")] + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte(series+" ")); ok {
			var f float64
			fmt.Sscan(string(v), &f)
			return f
		}
	}
	return 0
}

// validHeader reports whether net/http sends v as a header value.
func validHeader(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
