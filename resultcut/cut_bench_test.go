package resultcut

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCutJSON cuts a 118 KB JSON text (1,500 rows) to 2,000 tokens:
// the decode, the trimming ladder and the document kept.
func BenchmarkCutJSON(b *testing.B) {
	text := `{"rows":[` + strings.Repeat(`{"id":12345,"name":"some name here","tags":["a","b"],"nested":{"k":"v","n":1}},`, 1500) + `{}]}`
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
		Cut(res, 2000, keep, false)
	}
}
