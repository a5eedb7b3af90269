package toolresult_test

import (
	"encoding/json"
	"testing"

	"github.com/legate-mcp/legate/provenance"
	"github.com/legate-mcp/legate/server/toolresult"
)

// BenchmarkMarkRaw is what marking costs a relayed upstream result of a
// few hundred bytes.
func BenchmarkMarkRaw(b *testing.B) {
	raw := json.RawMessage(`{"content":[{"type":"text","text":"hello from the upstream, a short answer of a few words, as P1 relays it"}],"structuredContent":{"ok":true,"n":42}}`)
	b.ReportAllocs()
	for b.Loop() {
		toolresult.MarkRaw(raw, provenance.New("mcp.up", "mcp.up.echo"), false)
	}
}
