package fastpath

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestUnmarshalReadsAsTheSDK: keys match their fields only in their own
// case, as the go-sdk's server reads them, and nesting beyond the SDK's
// depth is refused.
func TestUnmarshalReadsAsTheSDK(t *testing.T) {
	var msg message
	if err := unmarshal([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"tools/call","PARAMS":{"name":"x"}}`), &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Method != "tools/list" || msg.Params != nil {
		t.Errorf("read %q with params %s; want tools/list without params", msg.Method, msg.Params)
	}
	var in callParams
	if err := unmarshal([]byte(`{"name":"a","Name":"b","ARGUMENTS":{}}`), &in); err != nil || in.Name != "a" || in.Arguments != nil {
		t.Errorf("read %+v, %v; want name a and no arguments", in, err)
	}
	deep := func(n int) []byte {
		return []byte(`{"a":"[[[{{\"","b":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`)
	}
	var v any
	if err := unmarshal(deep(maxDepth), &v); err != nil {
		t.Errorf("%d levels (brackets in a string not counted): %v", maxDepth, err)
	}
	if err := unmarshal(deep(maxDepth+1), &v); err == nil {
		t.Errorf("%d levels read; want them refused", maxDepth+1)
	}
}

// BenchmarkDecodeRequest reads a tools/call's envelope and params, as the
// fast path does: with encoding/json, as it did, and with unmarshal.
func BenchmarkDecodeRequest(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"mcp__up__echo","arguments":{"text":"hello world, a call of the fast path"},"_meta":{"progressToken":"p1"}}}`)
	for _, d := range []struct {
		name   string
		decode func([]byte, any) error
	}{{"encoding-json", json.Unmarshal}, {"as-the-sdk", unmarshal}} {
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
