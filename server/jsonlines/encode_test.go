package jsonlines

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An answer is written byte for byte as the go-sdk would write it.
func TestEncodeIsTheSDKs(t *testing.T) {
	var ids []jsonrpc.ID
	for _, raw := range []any{1.0, -7.0, float64(int64(1) << 60), "abc", "a<b>&c \u2028 é \"q\"", ""} {
		id, err := jsonrpc.MakeID(raw)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	big, _ := json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "<b>a & b</b> \u2028\n\t"}},
		StructuredContent: map[string]any{"html": "<i>", "n": 1.5, "s": []any{nil, true}}})
	for _, id := range ids {
		for _, msg := range []jsonrpc.Message{
			&jsonrpc.Response{ID: id, Result: json.RawMessage(`{}`)},
			&jsonrpc.Response{ID: id, Result: big},
			&jsonrpc.Response{ID: id, Result: json.RawMessage("{\n \"a\" : 1 }")}, // not compact: encoding/json's
			&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: -32602, Message: "bad <params>"}},
			&jsonrpc.Request{ID: id, Method: "ping"},
		} {
			want, werr := jsonrpc.EncodeMessage(msg)
			got, gerr := encode(msg)
			if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
				t.Errorf("%#v:\n got %s (%v)\nwant %s (%v)", msg, got, gerr, want, werr)
			}
		}
	}
}
