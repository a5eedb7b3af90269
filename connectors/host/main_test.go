package host_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/server/servertest"
)

func TestContract(t *testing.T) {
	connectortest.Run(t, connectortest.Case{Type: "host", Config: "workspace_root: " + t.TempDir() +
		"\nallow_shell: true\nallow_install: true\nallow_fetch: true\nskills_dir: " + t.TempDir()})
}

// gateway is a Legate serving one host instance (id "host") over HTTP on
// 127.0.0.1, every class allowed.
type gateway struct {
	gw  *server.Gateway
	url string
}

func newGateway(t *testing.T, hostConfig string) *gateway {
	t.Helper()
	var b strings.Builder
	b.WriteString("tool_names: canonical\npolicy:\n  defaults: {read: allow, draft: allow, write: allow, destructive: allow}\nconnectors:\n  - id: host\n    type: host\n    config:\n")
	for _, line := range strings.Split(strings.TrimSpace(hostConfig), "\n") {
		b.WriteString("      " + line + "\n")
	}
	g := servertest.Start(t, b.String(), servertest.Env(func(string) (string, bool) { return "", false }),
		servertest.With(func(o *server.Options) { o.StoreWatchInterval = 20 * time.Millisecond }))
	return &gateway{gw: g.GW, url: g.URL + "/mcp"}
}

// connect opens an MCP client session; opts may be nil.
func (g *gateway) connect(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// toolNames lists the session's tools.
func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// outcome is a call's result as the client saw it.
type outcome struct {
	isError bool
	code    string
	text    string
	data    map[string]any
}

// call calls host.<tool> and returns what came back; a protocol error
// fails the test.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) outcome {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "host." + tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	o := outcome{isError: res.IsError}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			o.text += tc.Text
		}
	}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &o.data)
		if e, ok := o.data["error"].(map[string]any); ok && res.IsError {
			o.code, _ = e["code"].(string)
		}
	}
	if o.isError && o.code == "" {
		o.code, _, _ = strings.Cut(o.text, ":")
	}
	return o
}

// ok calls a tool that must succeed and returns its structured result.
func ok(t *testing.T, cs *mcp.ClientSession, tool string, args any) map[string]any {
	t.Helper()
	o := call(t, cs, tool, args)
	if o.isError {
		text, _ := capped(o.text)
		t.Fatalf("%s: %s", tool, text)
	}
	return o.data
}

// fails calls a tool that must fail with code and returns the outcome.
func fails(t *testing.T, cs *mcp.ClientSession, tool string, args any, code string) outcome {
	t.Helper()
	o := call(t, cs, tool, args)
	if !o.isError || o.code != code {
		text, _ := capped(o.text)
		t.Fatalf("%s: want %s, got error=%v %s", tool, code, o.isError, text)
	}
	return o
}

// capped is s, cut to 500 bytes for a failure message.
func capped(s string) (string, bool) {
	if len(s) > 500 {
		return s[:500] + "…", true
	}
	return s, false
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
