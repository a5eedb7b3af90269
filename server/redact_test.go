package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
)

// An upstream that echoes the credential Legate sends it: the client must
// see it masked.
func TestUpstreamCredentialEchoIsMasked(t *testing.T) {
	const secret = "Bearer upstream-canary-7f3a9c"
	t.Setenv("LEGATE_TEST_UPSTREAM_AUTH", secret)
	s := mcp.NewServer(&mcp.Implementation{Name: "echoer", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			auth := req.Extra.Header.Get("Authorization")
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: "you sent " + auth}},
				StructuredContent: map[string]any{"authorization": auth},
			}, nil
		})
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer up.Close()
	cfg, err := config.Parse([]byte(`upstreams:
  - {id: up, url: "`+up.URL+`", header_env: {Authorization: LEGATE_TEST_UPSTREAM_AUTH}}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	gw, err := server.New(ctx, server.Options{Config: cfg, Store: memStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	if _, err := gw.Upstreams().Refresh(ctx, "up"); err != nil {
		t.Fatal(err)
	}
	res, err := gw.Call(ctx, "mcp.up.whoami", nil, server.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), "upstream-canary") || !strings.Contains(string(b), "[redacted]") {
		t.Fatalf("the upstream's echo of its credential reached the client: %s", b)
	}

	// The same through a client's session, where the result is relayed as bytes.
	url := serve(t, gw)
	cs := fastSession(t, url)
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: wire("mcp.up.whoami")})
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(res)
	if strings.Contains(string(b), "upstream-canary") || !strings.Contains(string(b), "[redacted]") {
		t.Fatalf("relayed, the upstream's echo of its credential reached the client: %s", b)
	}
	if metric(t, url, `legate_fast_path_requests_total{method="tools/call"}`) != 1 {
		t.Fatal("the call was not relayed")
	}
}
