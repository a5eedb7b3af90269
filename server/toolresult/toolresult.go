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
	"bytes"
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
	if res.Meta != nil {
		out.Meta = res.Meta
	}
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

// MarkRaw marks a result's JSON as provenance.Set marks its decoding. A
// result that is not a JSON object (none: nil) is returned as it is.
func MarkRaw(raw json.RawMessage, m provenance.Mark, spotlight bool) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	if i := bytes.IndexByte(raw, '{'); !spotlight && i >= 0 && len(bytes.TrimSpace(raw[:i])) == 0 && !bytes.Contains(raw, []byte(`"_meta"`)) {
		// Nearly every result: the member goes in front, in one copy.
		const member = `"_meta":{"` + provenance.MetaKey + `":`
		mark := m.JSON()
		out := make([]byte, 0, len(raw)+len(member)+len(mark)+2)
		out = append(append(append(append(out, raw[:i+1]...), member...), mark...), '}')
		if rest := bytes.TrimSpace(raw[i+1:]); len(rest) > 1 { // not "}"
			out = append(out, ',')
		}
		return append(out, raw[i+1:]...)
	}
	top, meta, ok := members(raw)
	if !ok {
		return raw
	}
	meta[provenance.MetaKey] = m.JSON()
	top["_meta"], _ = json.Marshal(meta)
	var content []map[string]json.RawMessage
	if spotlight && json.Unmarshal(top["content"], &content) == nil {
		for _, c := range content {
			var kind, text string
			if json.Unmarshal(c["type"], &kind) == nil && kind == "text" && json.Unmarshal(c["text"], &text) == nil {
				c["text"], _ = json.Marshal(provenance.Wrap(text, m))
			}
		}
		top["content"], _ = json.Marshal(content)
	}
	out, err := json.Marshal(top)
	if err != nil {
		return raw
	}
	return out
}

// members are a result's top-level members and those of its _meta; ok is
// false unless the result is an object whose _meta, if any, is one too (a
// _meta that is not an object is the upstream's to answer for).
func members(raw []byte) (top, meta map[string]json.RawMessage, ok bool) {
	if json.Unmarshal(raw, &top) != nil {
		return nil, nil, false
	}
	meta = map[string]json.RawMessage{}
	if m, found := top["_meta"]; found && json.Unmarshal(m, &meta) != nil {
		return nil, nil, false
	}
	return top, meta, true
}

// ServerInfoKey is where a stateless request's result names the server.
const ServerInfoKey = "io.modelcontextprotocol/serverInfo"

// MarkStateless is a result (relayed, or encoded) as the SDK answers a
// stateless request: marked complete unless it says otherwise, with this
// server's Implementation (info, as encoding/json wrote it) in its _meta
// unless that names one.
func MarkStateless(res []byte, info json.RawMessage) []byte {
	top, meta, ok := members(res)
	if !ok {
		return res
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
