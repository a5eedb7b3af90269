// Package toolresult makes the MCP result of a native tool call, encodes
// tools/call results for the fast path (Encode; Stateless, MarkStateless
// for the answer to a stateless request, which names the server), and
// marks results complete for 2026-07-28 clients as the go-sdk's own
// handlers do (Complete).
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
	"github.com/legate-mcp/legate/provenance"
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
	text, raw, mark, ok := native(res)
	if !ok {
		return json.Marshal(res)
	}
	const marked, head, mid, isError = `{"_meta":{"` + provenance.MetaKey + `":`, `{"content":[{"type":"text","text":`, `}],"structuredContent":`, `,"isError":true`
	b := make([]byte, 0, len(marked)+len(mark)+len(head)+len(text)+len(mid)+len(raw)+len(isError)+2)
	if mark != nil {
		b = append(append(append(b, marked...), mark...), `},`...)
		b = append(b, head[1:]...)
	} else {
		b = append(b, head...)
	}
	b = append(append(append(b, text...), mid...), raw...)
	if res.IsError {
		b = append(b, isError...)
	}
	return append(b, '}'), nil
}

// Stateless is Encode(res) as the answer to a stateless request (protocol
// 2026-07-28) carries it: MarkStateless(Encode(res), info), written in one
// pass for the shape Encode writes itself.
func Stateless(res *mcp.CallToolResult, info json.RawMessage) ([]byte, error) {
	text, raw, mark, ok := native(res)
	if !ok {
		b, err := Encode(res)
		if err != nil {
			return nil, err
		}
		return MarkStateless(b, info), nil
	}
	// MarkStateless's output: a map's members, in encoding/json's order.
	const marked, head, content, mid, isError, tail = `{"_meta":{"` + provenance.MetaKey + `":`, `{"_meta":{"` + ServerInfoKey + `":`, `},"content":[{"type":"text","text":`,
		`}],`, `"isError":true,`, `"resultType":"complete","structuredContent":`
	b := make([]byte, 0, len(marked)+len(mark)+len(head)+len(info)+len(content)+len(text)+len(mid)+len(isError)+len(tail)+len(raw)+2)
	if mark != nil {
		b = append(append(append(append(b, marked...), mark...), ',', '"'), ServerInfoKey+`":`...)
	} else {
		b = append(b, head...)
	}
	b = append(append(append(append(b, info...), content...), text...), mid...)
	if res.IsError {
		b = append(b, isError...)
	}
	b = append(append(b, tail...), raw...)
	return append(b, '}'), nil
}

// ServerInfoKey is where a stateless request's result names the server.
const ServerInfoKey = "io.modelcontextprotocol/serverInfo"

// MarkStateless is a result (relayed, or encoded) as the SDK answers a
// stateless request: marked complete unless it says otherwise, with this
// server's Implementation (info, as encoding/json wrote it) in its _meta
// unless that names one.
func MarkStateless(res []byte, info json.RawMessage) []byte {
	var top map[string]json.RawMessage
	if json.Unmarshal(res, &top) != nil {
		return res
	}
	meta := map[string]json.RawMessage{}
	if m, ok := top["_meta"]; ok && json.Unmarshal(m, &meta) != nil {
		return res // a _meta that is not an object is the upstream's to answer for
	}
	if _, ok := top["resultType"]; !ok {
		top["resultType"] = resultTypeComplete
	}
	if _, ok := meta[ServerInfoKey]; !ok {
		meta[ServerInfoKey] = info
		top["_meta"], _ = json.Marshal(meta)
	}
	out, err := json.Marshal(top)
	if err != nil {
		return res
	}
	return out
}

// resultTypeComplete is a finished result's resultType, as JSON.
var resultTypeComplete = json.RawMessage(`"complete"`)

// native returns the text (as JSON) and structured content of a result of
// the shape Native makes, and whether res has that shape.
func native(res *mcp.CallToolResult) (text, raw, mark json.RawMessage, ok bool) {
	raw, ok = res.StructuredContent.(json.RawMessage)
	if !ok || len(raw) == 0 || res.InputRequests != nil || res.NeedsInput() || len(res.Content) != 1 {
		return nil, nil, nil, false
	}
	if res.Meta != nil {
		// Only a provenance (package provenance), as json.Marshal wrote it.
		if mark, ok = res.Meta[provenance.MetaKey].(json.RawMessage); !ok || len(res.Meta) != 1 {
			return nil, nil, nil, false
		}
	}
	t, ok := res.Content[0].(*mcp.TextContent)
	if !ok || t == nil || t.Meta != nil || t.Annotations != nil {
		return nil, nil, nil, false
	}
	text, err := json.Marshal(t.Text) // escaped as encoding/json escapes it
	if err != nil {
		return nil, nil, nil, false
	}
	return text, raw, mark, true
}
