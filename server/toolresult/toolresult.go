// Package toolresult makes the MCP result of a native tool call, encodes
// tools/call results for the fast path, and marks results complete for
// 2026-07-28 clients as the go-sdk's own handlers do (Complete).
//
// A native result's structured content is encoded once, when it is made
// (Native); Encode then writes the result around those bytes, byte for
// byte as encoding/json writes the go-sdk's CallToolResult, instead of
// having encoding/json scan the structured content twice more and the
// whole result once more (the go-sdk's MarshalJSON, then the compaction of
// its output). On a 100-row query that was a fifth of the gateway's CPU.
package toolresult

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
)

// Native turns a connector's result into an MCP result: its text (or its
// JSON) and its structured content, always a JSON object, as a
// json.RawMessage that encoding/json wrote (compact, HTML escaped), which
// Encode relies on.
func Native(res *legate.Result) (*mcp.CallToolResult, error) {
	out := &mcp.CallToolResult{Content: []mcp.Content{}}
	if res == nil {
		return out, nil
	}
	text := res.Text
	if res.Structured != nil {
		b, err := json.Marshal(res.Structured)
		if err != nil {
			return nil, &legate.Error{Code: legate.CodeAdapterMapping, Message: "result is not JSON", Err: err}
		}
		if text == "" {
			text = string(b)
		}
		if len(b) == 0 || b[0] != '{' {
			// Structured content must be an object.
			b = append(append([]byte(`{"result":`), b...), '}')
		}
		out.StructuredContent = json.RawMessage(b)
	}
	out.Content = append(out.Content, &mcp.TextContent{Text: text})
	return out, nil
}

// Encode is json.Marshal(res). For the shape Native makes — one plain text
// content, structured content a json.RawMessage from Native, nothing else
// but isError — it writes the bytes itself; any other result goes to
// encoding/json.
func Encode(res *mcp.CallToolResult) ([]byte, error) {
	raw, ok := res.StructuredContent.(json.RawMessage)
	if !ok || len(raw) == 0 || res.Meta != nil || res.InputRequests != nil || res.NeedsInput() || len(res.Content) != 1 {
		return json.Marshal(res)
	}
	t, ok := res.Content[0].(*mcp.TextContent)
	if !ok || t == nil || t.Meta != nil || t.Annotations != nil {
		return json.Marshal(res)
	}
	text, err := json.Marshal(t.Text) // escaped as encoding/json escapes it
	if err != nil {
		return nil, err
	}
	const head, mid, isError = `{"content":[{"type":"text","text":`, `}],"structuredContent":`, `,"isError":true`
	b := make([]byte, 0, len(head)+len(text)+len(mid)+len(raw)+len(isError)+1)
	b = append(append(append(append(b, head...), text...), mid...), raw...)
	if res.IsError {
		b = append(b, isError...)
	}
	return append(b, '}'), nil
}
