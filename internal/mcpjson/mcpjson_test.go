package mcpjson

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestUnmarshalReadsAsTheSDK: keys match their fields only in their own
// case, as the go-sdk reads them, and nesting beyond the SDK's depth is
// refused.
func TestUnmarshalReadsAsTheSDK(t *testing.T) {
	var msg struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
	}
	if err := Unmarshal([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"tools/call","PARAMS":{"name":"x"},"result":{"a":1},"Result":{"b":2}}`), &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Method != "tools/list" || msg.Params != nil || string(msg.Result) != `{"a":1}` {
		t.Errorf("read %q, params %s, result %s; want tools/list, no params, the result in lower case", msg.Method, msg.Params, msg.Result)
	}
	deep := func(n int) []byte {
		return []byte(`{"a":"[[[{{\"","b":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`)
	}
	var v any
	if err := Unmarshal(deep(MaxDepth), &v); err != nil {
		t.Errorf("%d levels (brackets in a string not counted): %v", MaxDepth, err)
	}
	if err := Unmarshal(deep(MaxDepth+1), &v); err == nil {
		t.Errorf("%d levels read; want them refused", MaxDepth+1)
	}
	// What follows the first value is left, as the SDK's one Decode leaves it.
	if err := Unmarshal([]byte(`{"method":"a"} trailing`), &msg); err != nil || msg.Method != "a" {
		t.Errorf("read %q, %v; want a", msg.Method, err)
	}
}
