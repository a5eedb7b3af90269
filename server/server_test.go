package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	_ "github.com/legate-mcp/legate/connectors/http" // the built-in http.request tool
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store/sqlite"
)

// echo is a connector type for these tests: tool "echo" returns its
// argument and the credential's length; "fail" returns the canonical error
// its argument names; "boom" panics.
type echoConn struct{}

type echoArgs struct {
	Text string `json:"text" jsonschema:"text to echo"`
}

// echoResult is what tool "echo" returns, its output schema.
type echoResult struct {
	KeyLen    int    `json:"key_len"`
	Principal string `json:"principal"`
	Text      string `json:"text"`
}

func (echoConn) Validate() error                                    { return nil }
func (echoConn) Test(context.Context, connectors.Credentials) error { return nil }
func (echoConn) Tools() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[echoResult](connectors.NewTool("echo", "Echo text back.", legate.ClassRead,
			func(ctx context.Context, call *connectors.Call, in *echoArgs) (*legate.Result, error) {
				secret, _ := call.Credentials.Get(ctx, "key")
				return &legate.Result{Structured: echoResult{Text: in.Text, Principal: call.Caller.Principal, KeyLen: len(secret)}}, nil
			})),
		connectors.NewTool("fail", "Fail with the code given as text.", legate.ClassWrite,
			func(ctx context.Context, call *connectors.Call, in *echoArgs) (*legate.Result, error) {
				return nil, &legate.Error{Code: legate.Code(in.Text), Message: "failed as asked"}
			}),
		connectors.NewTool("boom", "Panic.", legate.ClassWrite,
			func(ctx context.Context, call *connectors.Call, in *echoArgs) (*legate.Result, error) {
				panic("boom")
			}),
	}
}

func init() {
	connectors.Register(connectors.Type{
		Name: "echo-test", Description: "test connector",
		Credentials: []connectors.Credential{{Name: "key", Description: "a secret"}},
		New:         func(connectors.Instance) (connectors.Connector, error) { return echoConn{}, nil },
	})
}

const testConfig = `
policy:
  defaults: {read: allow, draft: allow, write: allow, destructive: allow}
connectors:
  - id: e
    type: echo-test
    credentials:
      key: {env: LEGATE_TEST_KEY}
`

func newGateway(t *testing.T, doc string) *server.Gateway {
	t.Helper()
	t.Setenv("LEGATE_TEST_KEY", "s3cret")
	cfg, err := config.Parse([]byte(doc), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	gw, err := server.New(context.Background(), server.Options{Config: cfg, Store: memStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	return gw
}

func memStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.OpenMemory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// serve starts the gateway's HTTP handler on a real loopback listener.
func serve(t *testing.T, gw *server.Gateway) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: gw.Handler(ln.Addr().String())}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func connect(t *testing.T, url, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestListAndCallOverHTTP(t *testing.T) {
	gw := newGateway(t, testConfig)
	url := serve(t, gw)
	for _, version := range []string{"2025-11-25", "2025-06-18", ""} {
		t.Run("protocol "+version, func(t *testing.T) {
			cs := connect(t, url, version)
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			want := "e__boom e__echo e__fail http__request legate__approval_status legate__result_read legate__search_tools"
			if strings.Join(names, " ") != want {
				t.Fatalf("tools = %v, want %s", names, want)
			}
			for _, tool := range res.Tools {
				if tool.Name == "e__echo" && tool.OutputSchema == nil {
					t.Fatal("e__echo lists no output schema")
				}
			}
			for _, name := range []string{"e__echo", "e.echo"} {
				r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "hi"}})
				if err != nil {
					t.Fatal(err)
				}
				if r.IsError {
					t.Fatalf("%s: error result %v", name, r.Content[0])
				}
				got, _ := json.Marshal(r.StructuredContent)
				if string(got) != `{"key_len":6,"principal":"local","text":"hi"}` {
					t.Fatalf("%s: structured content %s", name, got)
				}
			}
		})
	}
}

func TestErrorsReachTheClient(t *testing.T) {
	gw := newGateway(t, testConfig)
	cs := connect(t, serve(t, gw), "2025-11-25")
	ctx := context.Background()

	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("unknown tool: %v, want a JSON-RPC error", err)
	}

	tests := map[string]struct {
		tool string
		args map[string]any
		code string
	}{
		"canonical error": {"e__fail", map[string]any{"text": "RATE_LIMITED"}, "RATE_LIMITED"},
		"bad arguments":   {"e__echo", map[string]any{"nope": 1}, "INVALID_ARGUMENT"},
		"panic":           {"e__boom", map[string]any{"text": "x"}, "ADAPTER_MAPPING_ERROR"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			if code, _ := errorCode(t, r); !r.IsError || code != tc.code {
				t.Fatalf("got isError=%v code %q, want code %s", r.IsError, code, tc.code)
			}
			if text := r.Content[0].(*mcp.TextContent).Text; !strings.HasPrefix(text, tc.code+": ") {
				t.Fatalf("text %q does not start with the code", text)
			}
		})
	}
	// The gateway survived the panic.
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
}

func TestStatelessClients(t *testing.T) {
	gw := newGateway(t, testConfig)
	cs := connect(t, serve(t, gw), "2026-07-28")
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s", v)
	}
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "e__echo", Arguments: map[string]any{"text": "x"}})
	if err != nil || r.IsError {
		t.Fatalf("call: %v %v", r, err)
	}
}

func TestHostAndOriginAreChecked(t *testing.T) {
	gw := newGateway(t, "")
	url := serve(t, gw)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	tests := map[string]struct {
		host, origin string
		want         int
	}{
		"loopback":             {"", "", 200},
		"localhost origin":     {"", "http://localhost:6274", 200},
		"evil origin":          {"", "https://evil.example", 403},
		"evil host":            {"evil.example", "", 403},
		"evil host and origin": {"evil.example:80", "http://evil.example", 403},
		"localhost host":       {"localhost", "", 200},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", url, strings.NewReader(init))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}

func TestCallPathOutsideMCP(t *testing.T) {
	gw := newGateway(t, testConfig)
	_, err := gw.Call(context.Background(), "nope", nil, server.CallOptions{})
	if !errors.Is(err, server.ErrUnknownTool) {
		t.Fatalf("got %v", err)
	}
	res, err := gw.Call(context.Background(), "e.echo", json.RawMessage(`{"text":"cli"}`), server.CallOptions{})
	if err != nil || res.IsError || !strings.Contains(string(res.StructuredContent.(json.RawMessage)), `"text":"cli"`) {
		t.Fatalf("got %v, %v", res, err)
	}
}

func TestInstanceNamedLikeTheBuiltinDoesNotCollide(t *testing.T) {
	cfg, err := config.Parse([]byte("connectors:\n  - id: http\n    type: echo-test\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = server.New(context.Background(), server.Options{Config: cfg, Store: memStore(t)})
	if err != nil {
		t.Fatalf("instance id http with other tool names must not collide: %v", err)
	}
}

// post sends one JSON-RPC message to url and returns the response.
func post(t *testing.T, url, session, accept, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// A session's fast tools/list holds the tools a stateless client lists, as
// the go-sdk client decodes them; an unknown session is the SDK's to refuse.
// (TestFastListIsTheSDKs compares the fast answers with the SDK's.)
func TestToolsListFastPath(t *testing.T) {
	gw := newGateway(t, testConfig)
	url := serve(t, gw)
	const both = "application/json, text/event-stream"
	resp := post(t, url, "", both, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	resp.Body.Close()
	if sid == "" {
		t.Fatal("no session id")
	}
	post(t, url, sid, both, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()

	var fastMsg struct {
		ID     string          `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	waitFor(t, "a fast tools/list", func() bool {
		msgs := sseMessages(t, post(t, url, sid, both, `{"jsonrpc":"2.0","id":"a","method":"tools/list"}`))
		return len(msgs) == 1 && json.Unmarshal(msgs[0], &fastMsg) == nil && fastMsg.ID == "a" &&
			metric(t, url, `legate_fast_path_requests_total{method="tools/list"}`) >= 1
	})
	// A stateless (2026-07-28) client, through the go-sdk client, sees the same tools.
	res, err := connect(t, url, "2026-07-28").ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var x struct {
		Tools []*mcp.Tool `json:"tools"`
	}
	if err := json.Unmarshal(fastMsg.Result, &x); err != nil {
		t.Fatal(err)
	}
	xb, _ := json.Marshal(x.Tools)
	yb, _ := json.Marshal(res.Tools)
	if string(xb) != string(yb) {
		t.Fatalf("the session's and the stateless client's tools differ:\n%s\n%s", xb, yb)
	}

	// An unknown session is the SDK's to refuse.
	r := post(t, url, "no-such-session", both, `{"jsonrpc":"2.0","id":"c","method":"tools/list"}`)
	r.Body.Close()
	if r.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown session: status %d", r.StatusCode)
	}
}
