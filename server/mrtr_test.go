package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"

	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// mrtrUpstream serves, without sessions (as a 2026-07-28 server does), a
// tool "greet" that asks for a name by answering input_required with its
// own request state, and greets once the retry brings the name and that
// state back (calls counts its runs), and a prompt "ask" that asks for a
// topic the same way.
func mrtrUpstream(t *testing.T) (url string, calls *atomic.Int64) {
	t.Helper()
	calls = new(atomic.Int64)
	s := mcp.NewServer(&mcp.Implementation{Name: "mrtr-upstream", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "greet", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		calls.Add(1)
		if r, ok := req.Params.InputResponses["name"].(*mcp.ElicitResult); ok && r.Action == "accept" {
			if req.Params.RequestState != "upstream-state" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "not my state: " + req.Params.RequestState}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint("Hello, ", r.Content["name"])}}}, nil
		}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{
				Message:         "Your name?",
				RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}},
			}},
			RequestState: "upstream-state",
		}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "ask"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if r, ok := req.Params.InputResponses["topic"].(*mcp.ElicitResult); ok && r.Action == "accept" && req.Params.RequestState == "prompt-state" {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprint("About ", r.Content["topic"])}}}}, nil
		}
		return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"topic": &mcp.ElicitParams{Message: "Topic?", RequestedSchema: &jsonschema.Schema{Type: "object"}}}, RequestState: "prompt-state"}, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)
	return srv.URL, calls
}

// mrtrGateway serves a gateway whose one upstream is url, speaking
// protocol (default when ""), with the extra config doc.
func mrtrGateway(t *testing.T, url, protocol, doc string) (string, store.Store, *server.Gateway) {
	t.Helper()
	st := memStore(t)
	up := "upstreams:\n  - {id: up, url: \"" + url + "/\""
	if protocol != "" {
		up += ", protocol_version: \"" + protocol + "\""
	}
	gw := upGateway(t, up+"}\n"+doc, st, nil)
	u := serve(t, gw)
	cs := connect(t, u, "2025-11-25")
	waitFor(t, "the upstream's tool", func() bool { return strings.Contains(strings.Join(toolNames(t, cs), " "), wire("mcp.up.greet")) })
	return u, st, gw
}

// approveAll approves each request of gw's inbox as it comes, until the
// test ends.
func approveAll(t *testing.T, st store.Store, gw *server.Gateway) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			l, _ := st.Approvals().List(ctx, store.ApprovalFilter{State: store.StatePending, AllTenants: true, Limit: 1})
			for _, a := range l {
				gw.Decide(ctx, a.ID, true, "approver", "")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
}

// TestInputRequiredRelayed: a 2026-07-28 client gets an upstream's
// input_required result under a request state of Legate's (not the
// upstream's, nor one it can alter or reuse for other arguments), its retry
// reaches the upstream with the upstream's own state, and the logical call
// is approved once and audited once.
func TestInputRequiredRelayed(t *testing.T) {
	ctx := context.Background()
	upURL, calls := mrtrUpstream(t)
	url, st, gw := mrtrGateway(t, upURL, "", `approvals: {wait: 20s}
policy:
  rules:
    - {tool: mcp.up.greet, action: approve}
`)
	raw := mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	cs, err := raw.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	// Each logical call waits for an approver.
	approveAll(t, st, gw)
	args := map[string]any{"greeting": "hi"}
	first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: wire("mcp.up.greet"), Arguments: args})
	if err != nil || !first.NeedsInput() || first.InputRequests["name"] == nil {
		t.Fatalf("first round: %+v, %v; want input_required asking for a name", first, err)
	}
	if first.RequestState == "" || strings.Contains(first.RequestState, "upstream-state") {
		t.Fatalf("request state %q: want Legate's own, sealed", first.RequestState)
	}

	answer := mcp.InputResponseMap{"name": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}}
	for name, state := range map[string]string{"tampered": first.RequestState + "-TAMPERED", "the upstream's own": "upstream-state"} {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: wire("mcp.up.greet"), Arguments: args, InputResponses: answer, RequestState: state})
		if err == nil || !strings.Contains(err.Error(), "invalid requestState") {
			t.Errorf("retry with %s state: %v, want an invalid requestState error", name, err)
		}
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: wire("mcp.up.greet"), Arguments: map[string]any{"greeting": "other"}, InputResponses: answer, RequestState: first.RequestState})
	if err == nil || !strings.Contains(err.Error(), "invalid requestState") {
		t.Errorf("retry with other arguments: %v, want an invalid requestState error", err)
	}

	// The retry needs no second approval (the inbox keeps one request).
	done, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: wire("mcp.up.greet"), Arguments: args, InputResponses: answer, RequestState: first.RequestState})
	if err != nil || done.NeedsInput() || done.IsError || len(done.Content) == 0 || done.Content[0].(*mcp.TextContent).Text != "Hello, Ada" {
		t.Fatalf("retry: %+v, %v; want Hello, Ada", done, err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the upstream ran the tool %d times, want 2 (one per round)", n)
	}
	all, _ := st.Approvals().List(ctx, store.ApprovalFilter{AllTenants: true, Limit: 10})
	if len(all) != 1 {
		t.Errorf("%d approval requests, want 1 for the logical call", len(all))
	}

	// A prompt asks the same way.
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: wire("mcp.up.ask")})
	if err != nil || !p.NeedsInput() || p.RequestState == "prompt-state" || p.RequestState == "" {
		t.Fatalf("prompts/get: %+v, %v; want input_required under Legate's state", p, err)
	}
	topic := mcp.InputResponseMap{"topic": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"topic": "Ada"}}}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: wire("mcp.up.ask"), InputResponses: topic, RequestState: first.RequestState}); err == nil {
		t.Error("prompts/get retried with a tool call's state: no error")
	}
	p, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: wire("mcp.up.ask"), InputResponses: topic, RequestState: p.RequestState})
	if err != nil || p.NeedsInput() || len(p.Messages) != 1 || p.Messages[0].Content.(*mcp.TextContent).Text != "About Ada" {
		t.Fatalf("prompts/get retried: %+v, %v", p, err)
	}

	// A client that answers input requests itself (the go-sdk's default)
	// sees one call; the rows of both calls are in once a later call's is.
	auto := mcp.NewClient(&mcp.Implementation{Name: "auto", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace"}}, nil
		},
	})
	acs, err := auto.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer acs.Close()
	res, err := acs.CallTool(ctx, &mcp.CallToolParams{Name: wire("mcp.up.greet"), Arguments: map[string]any{"who": "auto"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "Hello, Grace" {
		t.Fatalf("a client answering input requests itself: %+v, %v", res, err)
	}
	if _, err := acs.CallTool(ctx, &mcp.CallToolParams{Name: wire("mcp.up.nothing")}); err == nil {
		t.Fatal("an unknown tool: no error")
	}
	waitFor(t, "the unknown tool's audit row", func() bool {
		rows, _ := st.Audit().Query(ctx, store.AuditQuery{Tool: wire("mcp.up.nothing")})
		return len(rows) == 1
	})
	rows, _ := st.Audit().Query(ctx, store.AuditQuery{Tool: "mcp.up.greet"})
	var calls2, refused int
	for _, r := range rows {
		switch {
		case r.Outcome == "ok" && r.Decision == "approve" && r.ApprovalID != "":
			calls2++ // a logical call: its first round's approval, its last round's outcome
		case r.Outcome != "ok" && r.ApprovalID == "":
			refused++ // a retry whose state did not open: no round of any call
		default:
			t.Errorf("audit row %+v", r)
		}
	}
	if calls2 != 2 || refused != 3 {
		t.Errorf("%d audit rows of calls and %d of refused retries, want 2 (one per logical call) and 3", calls2, refused)
	}
}

// TestInputRequiredFulfilledForOldClients: a 2025-11-25 client cannot
// answer input_required; Legate asks it mid-call (here, elicitation) for
// what a 2026-07-28 upstream requests, and calls the upstream again.
func TestInputRequiredFulfilledForOldClients(t *testing.T) {
	ctx := context.Background()
	upURL, calls := mrtrUpstream(t)
	url, _, _ := mrtrGateway(t, upURL, "2026-07-28", "")
	var asked atomic.Int64
	c := mcp.NewClient(&mcp.Implementation{Name: "old", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			if r.Params.Message != "Your name?" && r.Params.Message != "Topic?" {
				t.Errorf("asked %q, want the upstream's question", r.Params.Message)
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "topic": "Ada"}}, nil
		},
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: wire("mcp.up.greet"), Arguments: map[string]any{}})
	if err != nil || res.IsError || len(res.Content) == 0 || res.Content[0].(*mcp.TextContent).Text != "Hello, Ada" {
		t.Fatalf("call: %+v, %v; want Hello, Ada", res, err)
	}
	if asked.Load() != 1 || calls.Load() != 2 {
		t.Errorf("asked the client %d times, the upstream ran %d times; want 1 and 2", asked.Load(), calls.Load())
	}
	p, err := cs.GetPrompt(cctx, &mcp.GetPromptParams{Name: wire("mcp.up.ask")})
	if err != nil || p.NeedsInput() || len(p.Messages) != 1 || p.Messages[0].Content.(*mcp.TextContent).Text != "About Ada" {
		t.Fatalf("prompts/get: %+v, %v; want the prompt completed with the client's answer", p, err)
	}
}

// askUpstream serves over Streamable HTTP with sessions (a 2025-era server)
// a tool "ask" that asks the client for a name mid-call, as the stdio
// fixture's does.
func askUpstream(t *testing.T) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "ask-upstream", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}})
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint("Hello, ", res.Content["name"])}}}, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestMidCallInputHeld: a 2025-era upstream (over stdio) asks for input in
// the middle of a call on a shared session. A 2026-07-28 client gets it as
// input_required and its retry's answer reaches the upstream, the call held
// meanwhile; a 2025-11-25 client is asked mid-call, over HTTP as well,
// where the call is relayed as bytes.
func TestMidCallInputHeld(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// A fresh params each call: the go-sdk client adds its protocol _meta
	// to the params it sends.
	ask := func() *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: wire("mcp.local.ask"), Arguments: map[string]any{}}
	}
	old := func(url, name string) (*mcp.CallToolResult, error) {
		c := mcp.NewClient(&mcp.Implementation{Name: "old", Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
			},
		})
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			return nil, err
		}
		defer cs.Close()
		return cs.CallTool(ctx, ask())
	}
	httpGW := upGateway(t, "upstreams:\n  - id: local\n    url: "+askUpstream(t)+"\n", memStore(t), nil)
	waitCatalog(t, httpGW, "mcp.local.ask")
	if res, err := old(serve(t, httpGW), "Kim"); err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "Hello, Kim" {
		t.Errorf("a 2025-11-25 client, HTTP upstream: %+v, %v; want Hello, Kim", res, err)
	}

	fx := upstreamtest.NewStdio(t)
	gw := upGateway(t, "upstreams:\n  - id: local\n    "+fx.YAML()+"\n", memStore(t), nil)
	url := serve(t, gw)
	waitCatalog(t, gw, "mcp.local.ask")
	if res, err := old(url, "Lin"); err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "Hello, Lin" {
		t.Errorf("a 2025-11-25 client, stdio upstream: %+v, %v; want Hello, Lin", res, err)
	}

	raw := mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	rcs, err := raw.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rcs.Close()
	first, err := rcs.CallTool(ctx, ask())
	if err != nil || !first.NeedsInput() || len(first.InputRequests) != 1 || first.RequestState == "" {
		t.Fatalf("first round: %+v, %v; want input_required with the upstream's one request", first, err)
	}
	answers := mcp.InputResponseMap{}
	for key, ir := range first.InputRequests {
		if p, ok := ir.(*mcp.ElicitParams); !ok || p.Message != "Your name?" {
			t.Fatalf("input request %s: %#v, want the upstream's elicitation", key, ir)
		}
		answers[key] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}
	}
	retry := func() *mcp.CallToolParams {
		p := ask()
		p.InputResponses, p.RequestState = answers, first.RequestState
		return p
	}
	if done, err := rcs.CallTool(ctx, retry()); err != nil || done.NeedsInput() || done.Content[0].(*mcp.TextContent).Text != "Hello, Ada" {
		t.Fatalf("retry: %+v, %v; want Hello, Ada", done, err)
	}
	if _, err := rcs.CallTool(ctx, retry()); err == nil {
		t.Error("a retry of a call that ended was taken")
	}

	auto := mcp.NewClient(&mcp.Implementation{Name: "auto", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace"}}, nil
		},
	})
	acs, err := auto.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer acs.Close()
	if res, err := acs.CallTool(ctx, ask()); err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "Hello, Grace" {
		t.Errorf("a 2026-07-28 client answering input requests itself: %+v, %v; want Hello, Grace", res, err)
	}
}

// sessionUpstream serves over Streamable HTTP with sessions (a 2025-era
// server) what asks its client for input in the middle of a request, as
// go-sdk's server asks a client of an earlier protocol for what a
// multi-round result requests: a tool "several" asks for a name, a
// greeting (sampling) and the client's roots at once, then for a colour;
// a tool "caps" answers which client capabilities its request declares; a
// prompt "topic" asks for a topic.
func sessionUpstream(t *testing.T) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "session-upstream", Version: "1"}, nil)
	nameSchema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}
	s.AddTool(&mcp.Tool{Name: "several", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var name, greeting, root string
		g, gctx := errgroup.WithContext(ctx)
		g.Go(func() error {
			r, err := req.Session.Elicit(gctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: nameSchema})
			if err == nil {
				name = fmt.Sprint(r.Content["name"])
			}
			return err
		})
		g.Go(func() error {
			r, err := req.Session.CreateMessage(gctx, &mcp.CreateMessageParams{Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "A greeting?"}}}, MaxTokens: 20})
			if err == nil {
				greeting = r.Content.(*mcp.TextContent).Text
			}
			return err
		})
		g.Go(func() error {
			r, err := req.Session.ListRoots(gctx, &mcp.ListRootsParams{})
			if err == nil && len(r.Roots) > 0 {
				root = r.Roots[0].URI
			}
			return err
		})
		if err := g.Wait(); err != nil {
			return nil, err
		}
		r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Your colour?", RequestedSchema: &jsonschema.Schema{Type: "object"}})
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s, %s; %s; %v", greeting, name, root, r.Content["colour"])}}}, nil
	})
	// As go-sdk's everything-server: a multi-round result, which the SDK
	// asks a client of an earlier protocol for mid-call, once, then sends
	// the next round's as its result.
	s.AddTool(&mcp.Tool{Name: "rounds", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r, _ := req.Params.InputResponses["step"].(*mcp.ElicitResult)
		switch {
		case req.Params.RequestState == "" || r == nil:
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"step": &mcp.ElicitParams{Message: "Step 1?", RequestedSchema: nameSchema}}, RequestState: "round=1"}, nil
		case req.Params.RequestState == "round=1":
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"step": &mcp.ElicitParams{Message: "Step 2?", RequestedSchema: nameSchema}}, RequestState: fmt.Sprint("round=2;", r.Content["name"])}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(req.Params.RequestState, ";", r.Content["name"])}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "caps", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c := req.ClientCapabilities()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("elicitation=%v sampling=%v", c != nil && c.Elicitation != nil, c != nil && c.Sampling != nil)}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "topic"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Topic?", RequestedSchema: &jsonschema.Schema{Type: "object"}})
		if err != nil {
			return nil, err
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprint("About ", r.Content["topic"])}}}}, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// answerAll answers each of reqs as a client would: elicitations with
// content, sampling with text, roots with one root.
func answerAll(reqs mcp.InputRequestMap, content map[string]any) mcp.InputResponseMap {
	out := mcp.InputResponseMap{}
	for key, ir := range reqs {
		switch ir.(type) {
		case *mcp.ElicitParams:
			out[key] = &mcp.ElicitResult{Action: "accept", Content: content}
		case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
			out[key] = &mcp.CreateMessageResult{Role: "assistant", Model: "test", Content: &mcp.TextContent{Text: "Hello"}}
		case *mcp.ListRootsParams:
			out[key] = &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///work"}}}
		}
	}
	return out
}

// TestMidCallInputHeldHTTP: a 2025-era upstream over Streamable HTTP with
// sessions asks for input in the middle of a call, on its session with
// Legate, where the call is relayed as bytes. A 2026-07-28 client gets the
// upstream's requests as input_required, several at once in one round and
// round after round, under a request state it cannot alter; its retries'
// answers reach the waiting requests; a prompt asks the same way; and the
// upstream sees the capabilities the client declares, not Legate's.
func TestMidCallInputHeldHTTP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gw := upGateway(t, "upstreams:\n  - id: local\n    url: "+sessionUpstream(t)+"\n", memStore(t), nil)
	waitCatalog(t, gw, "mcp.local.several", "mcp.local.rounds", "mcp.local.caps")
	url := serve(t, gw)
	// It declares elicitation (it has a handler), not sampling; it answers
	// input_required itself, below.
	raw := mcp.NewClient(&mcp.Implementation{Name: "raw", Version: "1"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("not asked so")
		},
	})
	cs, err := raw.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}
	several := func(answers mcp.InputResponseMap, state string) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: wire("mcp.local.several"), Arguments: map[string]any{}, InputResponses: answers, RequestState: state})
	}

	first, err := several(nil, "")
	if err != nil || !first.NeedsInput() || first.RequestState == "" {
		t.Fatalf("first round: %+v, %v; want input_required", first, err)
	}
	kinds := map[string]bool{}
	for _, ir := range first.InputRequests {
		kinds[fmt.Sprintf("%T", ir)] = true
	}
	if len(first.InputRequests) != 3 || !kinds["*mcp.ElicitParams"] || !kinds["*mcp.ListRootsParams"] || len(kinds) != 3 {
		t.Fatalf("first round asks %d things (%v), want the upstream's three requests in one round: a name, a greeting and the roots", len(first.InputRequests), kinds)
	}
	answers := answerAll(first.InputRequests, map[string]any{"name": "Ada"})
	if _, err := several(answers, first.RequestState+"-TAMPERED"); err == nil || !strings.Contains(err.Error(), "invalid requestState") {
		t.Errorf("a retry with a tampered state: %v, want an invalid requestState error", err)
	}
	second, err := several(answers, first.RequestState)
	if err != nil || !second.NeedsInput() || len(second.InputRequests) != 1 || second.RequestState == first.RequestState {
		t.Fatalf("second round: %+v, %v; want input_required for the colour under a new state", second, err)
	}
	done, err := several(answerAll(second.InputRequests, map[string]any{"colour": "blue"}), second.RequestState)
	if err != nil || done.NeedsInput() || done.IsError || len(done.Content) == 0 || done.Content[0].(*mcp.TextContent).Text != "Hello, Ada; file:///work; blue" {
		t.Fatalf("last round: %+v, %v; want the upstream's result with every answer", done, err)
	}
	if _, err := several(answers, second.RequestState); err == nil {
		t.Error("a retry of a call that ended was taken")
	}

	// The upstream's own rounds: asked mid-call first, then by its result.
	state := ""
	var answers2 mcp.InputResponseMap
	for i, name := range []string{"Ada", "Lin"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: wire("mcp.local.rounds"), Arguments: map[string]any{}, InputResponses: answers2, RequestState: state})
		if err != nil || !res.NeedsInput() || len(res.InputRequests) != 1 || res.RequestState == "" || res.RequestState == state {
			t.Fatalf("rounds, round %d: %+v, %v; want input_required under a new state", i+1, res, err)
		}
		state, answers2 = res.RequestState, answerAll(res.InputRequests, map[string]any{"name": name})
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: wire("mcp.local.rounds"), Arguments: map[string]any{}, InputResponses: answers2, RequestState: state})
	if err != nil || res.NeedsInput() || res.IsError || res.Content[0].(*mcp.TextContent).Text != "round=2;Ada;Lin" {
		t.Fatalf("rounds, last round: %+v, %v; want round=2;Ada;Lin", res, err)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: wire("mcp.local.caps"), Arguments: map[string]any{}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "elicitation=true sampling=false" {
		t.Errorf("the capabilities the upstream sees: %+v, %v; want the client's (elicitation, no sampling)", res, err)
	}

	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: wire("mcp.local.topic")})
	if err != nil || !p.NeedsInput() || len(p.InputRequests) != 1 || p.RequestState == "" {
		t.Fatalf("prompts/get: %+v, %v; want input_required for the topic", p, err)
	}
	p, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: wire("mcp.local.topic"), InputResponses: answerAll(p.InputRequests, map[string]any{"topic": "Ada"}), RequestState: p.RequestState})
	if err != nil || p.NeedsInput() || len(p.Messages) != 1 || p.Messages[0].Content.(*mcp.TextContent).Text != "About Ada" {
		t.Fatalf("prompts/get retried: %+v, %v; want the prompt with the client's answer", p, err)
	}
}
