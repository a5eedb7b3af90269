package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/upstream/upstreamtest"
)

// A 2026-07-28 call to a tool whose schema mirrors arguments into
// Mcp-Param headers (SEP-2243) is refused, with HTTP 400 and the
// header-mismatch error, unless each header is there exactly when its
// argument is and says the same; relayed or through the SDK alike.
func TestParamHeadersAreChecked(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "hdr", Version: "1"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"priority":{"type":"integer","x-mcp-header":"Priority"},
		"opts":{"type":"object","properties":{"debug":{"type":"boolean","x-mcp-header":"Debug"}}},
		"query":{"type":"string"}}}`)
	s.AddTool(&mcp.Tool{Name: "route", InputSchema: schema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "routed"}}}, nil
		})
	up := upstreamtest.NewHTTPServer(t, s).URL()
	gw := upGateway(t, "upstreams:\n  - {id: up, url: "+up+"}\n  - {id: pc, url: "+up+", session: per_client}\n", memStore(t), nil)
	waitCatalog(t, gw, "mcp.up.route", "mcp.pc.route")
	url := serve(t, gw)

	call := func(t *testing.T, tool, args string, headers map[string]string) (int, string) {
		t.Helper()
		name := wire(tool)
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args +
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", name)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	all := `{"region":"us-west1","priority":42,"opts":{"debug":true},"query":"q"}`
	good := map[string]string{"Mcp-Param-Region": "us-west1", "Mcp-Param-Priority": "42", "Mcp-Param-Debug": "true"}
	with := func(k, v string) map[string]string {
		h := map[string]string{}
		for a, b := range good {
			h[a] = b
		}
		if v == "" {
			delete(h, k)
		} else {
			h[k] = v
		}
		return h
	}
	cases := map[string]struct {
		args    string
		headers map[string]string
		ok      bool
	}{
		"every header":               {all, good, true},
		"base64 form":                {`{"region":"Hello, 世界","priority":42,"opts":{"debug":true}}`, with("Mcp-Param-Region", "=?base64?SGVsbG8sIOS4lueVjA==?="), true},
		"integer in another form":    {all, with("Mcp-Param-Priority", "42.0"), true},
		"absent argument, no header": {`{"priority":42,"opts":{"debug":true}}`, with("Mcp-Param-Region", ""), true},
		"missing header":             {all, with("Mcp-Param-Region", ""), false},
		"different value":            {all, with("Mcp-Param-Region", "eu-west1"), false},
		"nested value differs":       {all, with("Mcp-Param-Debug", "false"), false},
		"header for absent argument": {`{"priority":42,"opts":{"debug":true}}`, good, false},
		"bad base64":                 {all, with("Mcp-Param-Region", "=?base64?SGVs!!!bG8=?="), false},
		"unpadded base64":            {`{"region":"Hello","priority":42,"opts":{"debug":true}}`, with("Mcp-Param-Region", "=?base64?SGVsbG8?="), false},
	}
	for _, tool := range []string{"mcp.up.route", "mcp.pc.route"} {
		for name, c := range cases {
			t.Run(tool+" "+name, func(t *testing.T) {
				status, body := call(t, tool, c.args, c.headers)
				accepted := status == http.StatusOK && strings.Contains(body, "routed")
				if accepted != c.ok {
					t.Fatalf("status %d, body %s", status, body)
				}
				if !c.ok && (!strings.Contains(body, `"code":-32020`) || tool == "mcp.up.route" && status != http.StatusBadRequest) {
					t.Fatalf("refused with status %d, body %s", status, body)
				}
			})
		}
	}
}
