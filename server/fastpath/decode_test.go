package fastpath

import (
	"encoding/json"
	"testing"

	"github.com/legate-mcp/legate/internal/mcpjson"
)

// BenchmarkDecodeRequest reads a tools/call's envelope and params, as the
// fast path does: with encoding/json, as it did, and with mcpjson.Unmarshal.
func BenchmarkDecodeRequest(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"mcp__up__echo","arguments":{"text":"hello world, a call of the fast path"},"_meta":{"progressToken":"p1"}}}`)
	for _, d := range []struct {
		name   string
		decode func([]byte, any) error
	}{{"encoding-json", json.Unmarshal}, {"as-the-sdk", mcpjson.Unmarshal}} {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var msg message
				var in callParams
				if d.decode(body, &msg) != nil || d.decode(msg.Params, &in) != nil || in.Name == "" {
					b.Fatal("not read")
				}
			}
		})
	}
}
