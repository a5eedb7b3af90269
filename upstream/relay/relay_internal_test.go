package relay

import (
	"encoding/json"
	"testing"
)

// What the call path needs of a relayed result is read from its JSON as
// the relay reads it: isError, and the size of its content's text, as the
// SDK's decoding of it would give them.
func TestOf(t *testing.T) {
	for _, c := range []struct {
		raw     string
		isError bool
		size    int
	}{
		{`{"content":[{"type":"text","text":"answered"}]}`, false, len("answered")},
		{`{"content":[{"type":"text","text":"h\u00e9llo \"q\""},{"type":"text","text":"ab"}],"isError":true}`, true, len("héllo \"q\"") + 2},
		{`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}`, false, 0},
		{`{"content":"not a list","isError":true}`, true, 0},
		{`{"structuredContent":{"text":"not content"}}`, false, 0},
		{`{}`, false, 0},
	} {
		rel := Of(json.RawMessage(c.raw))
		if string(rel.JSON) != c.raw || rel.IsError != c.isError || rel.Size != c.size {
			t.Errorf("%s: %+v, want isError %v and size %d", c.raw, rel, c.isError, c.size)
		}
	}
}

// TestAnswerReadAsTheSDKsClient: an upstream's answer naming both
// "result" and "Result", or "Error", is read as the go-sdk's client reads
// it, keys in their own case (encoding/json relayed the last of them).
func TestAnswerReadAsTheSDKsClient(t *testing.T) {
	c := &Conn{}
	for _, answer := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"a":1},"Result":{"b":2}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"a":1},"ERROR":{"code":-32603,"message":"x"}}`,
	} {
		raw, done, err := c.handleMessage([]byte(answer), "1", false)
		if err != nil || !done || string(raw) != `{"a":1}` {
			t.Errorf("%s: %s, %v, %v; want the result {\"a\":1}", answer, raw, done, err)
		}
	}
}
