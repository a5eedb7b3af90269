package toolresult_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/provenance"
	"github.com/legate-mcp/legate/server/toolresult"
)

// same fails unless Encode(res) is json.Marshal(res), and Stateless(res)
// is MarkStateless of that, byte for byte.
func same(t *testing.T, res *mcp.CallToolResult) {
	t.Helper()
	want, werr := json.Marshal(res)
	got, gerr := toolresult.Encode(res)
	if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
		t.Fatalf("Encode differs from json.Marshal:\n got %s (%v)\nwant %s (%v)", got, gerr, want, werr)
	}
	info, _ := json.Marshal(&mcp.Implementation{Name: "legate", Version: "v1.2.3 <dev>"}) // as the server has it
	want = toolresult.MarkStateless(want, info)
	got, gerr = toolresult.Stateless(res, info)
	if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
		t.Fatalf("Stateless differs from MarkStateless(json.Marshal):\n got %s (%v)\nwant %s (%v)", got, gerr, want, werr)
	}
}

func TestEncodeIsMarshal(t *testing.T) {
	rows := make([]map[string]any, 100)
	for i := range rows {
		rows[i] = map[string]any{"id": i, "name": "customer <&> \u2028 é", "amount": float64(i) * 1.25, "note": nil}
	}
	for _, r := range []*legate.Result{
		nil,
		{},
		{Text: "plain"},
		{Structured: map[string]any{"rows": rows, "row_count": 100, "truncated": false}},
		{Structured: map[string]any{"html": "<b>&amp;</b>", "ctl": "\x00\x1f\t\"\\", "bad utf-8": "\xff\xfe"}},
		{Structured: []int{1, 2, 3}},
		{Structured: "a string"},
		{Structured: json.RawMessage(` { "spaced" : [ 1 , "<x>" ] } `)},
		{Structured: map[string]any{"k": 1}, Text: "text of its own: <tag> \u2029"},
	} {
		res, err := toolresult.Native(r)
		if err != nil {
			t.Fatal(err)
		}
		same(t, res)
		res.IsError = true
		same(t, res)
		// Marked with its provenance, spotlighted or not.
		for _, spot := range []bool{false, true} {
			res, _ := toolresult.Native(r)
			provenance.Set(res, provenance.New("slack <&>", "slack.read_history"), spot)
			same(t, res)
			res.IsError = true
			same(t, res)
		}
	}
}

// Results of other shapes are encoding/json's.
func TestEncodeOtherShapes(t *testing.T) {
	raw := json.RawMessage(`{"a":1}`)
	for _, res := range []*mcp.CallToolResult{
		{},
		{Content: []mcp.Content{}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: map[string]any{"a": 1}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "x"}, &mcp.TextContent{Text: "y"}}, StructuredContent: raw},
		{Content: []mcp.Content{&mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Priority: 1}}}, StructuredContent: raw},
		{Content: []mcp.Content{&mcp.TextContent{Text: "x", Meta: mcp.Meta{"k": "v"}}}, StructuredContent: raw},
		{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: raw, Meta: mcp.Meta{"k": "v"}},
		{Content: []mcp.Content{&mcp.ImageContent{Data: []byte("x"), MIMEType: "image/png"}}, StructuredContent: raw},
	} {
		same(t, res)
	}
}

// FuzzEncode: for any text and any JSON value as structured content,
// Encode writes what encoding/json writes.
func FuzzEncode(f *testing.F) {
	f.Add("", `{"rows":[{"id":1,"name":"<a&b>"}]}`, false)
	f.Add("text \u2028", `[1,"x"]`, true)
	f.Add("\xff", `"s"`, false)
	f.Add("x", `null`, false)
	f.Fuzz(func(t *testing.T, text, structured string, isError bool) {
		var v any
		if json.Unmarshal([]byte(structured), &v) != nil {
			return
		}
		res, err := toolresult.Native(&legate.Result{Structured: v, Text: text})
		if err != nil {
			return
		}
		res.IsError = isError
		same(t, res)
	})
}

// Complete marks each kind of result complete, keeping every exported
// field, as the go-sdk marks the results of its own handlers.
func TestComplete(t *testing.T) {
	for _, c := range []struct {
		res  any
		want string
	}{
		{toolresult.Complete(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}, IsError: true}), `"isError":true`},
		{toolresult.Complete(&mcp.GetPromptResult{Description: "d", Messages: []*mcp.PromptMessage{}}), `"description":"d"`},
		{toolresult.Complete(&mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///a", Text: "x"}}}), `"uri":"file:///a"`},
	} {
		b, err := json.Marshal(c.res)
		if err != nil || !strings.Contains(string(b), `"resultType":"complete"`) || !strings.Contains(string(b), c.want) {
			t.Errorf("%T marked complete: %s %v", c.res, b, err)
		}
	}
}

func TestMarkRawKeepsTheResultAndAddsTheMark(t *testing.T) {
	m := provenance.New("mcp.docs", "mcp.docs.read")
	for name, raw := range map[string]string{
		"plain":         `{"content":[{"type":"text","text":"hi"}]}`,
		"spaced":        " \n{ \"content\" : [ { \"type\" : \"text\" , \"text\" : \"hi\" } ] } ",
		"empty":         `{}`,
		"with its meta": `{"_meta":{"trace":"t1"},"content":[{"type":"text","text":"hi"}]}`,
		"meta in text":  `{"content":[{"type":"text","text":"\"_meta\" is a key"}]}`,
	} {
		for _, spotlight := range []bool{false, true} {
			out := toolresult.MarkRaw(json.RawMessage(raw), m, spotlight)
			var res mcp.CallToolResult
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("%s: %s does not decode: %v", name, out, err)
			}
			got, ok := provenance.Of(&res)
			if !ok || got != m {
				t.Fatalf("%s: provenance %+v %v in %s", name, got, ok, out)
			}
			if name == "with its meta" && res.Meta["trace"] != "t1" {
				t.Errorf("%s: the result's own _meta was lost: %s", name, out)
			}
			if name == "empty" {
				continue
			}
			text := res.Content[0].(*mcp.TextContent).Text
			want := map[string]string{"meta in text": `"_meta" is a key`}[name]
			if want == "" {
				want = "hi"
			}
			ok = text == want
			if spotlight {
				ok = strings.HasPrefix(text, "[Untrusted data from mcp.docs (mcp.docs.read)") && strings.Contains(text, "\n"+want+"\n")
			}
			if !ok {
				t.Errorf("%s (spotlight %v): text %q", name, spotlight, text)
			}
		}
	}
	for _, raw := range []string{``, `[1]`, `"x"`, `{"_meta":3}`} {
		if out := toolresult.MarkRaw(json.RawMessage(raw), m, false); string(out) != raw {
			t.Errorf("MarkRaw(%s) = %s, want it as it was", raw, out)
		}
	}
}

// A native result whose connector names its author (provenance.Author) is
// masked in place like any other, its author too, and keeps the author
// for the mark the gateway writes.
func TestMaskKeepsTheAuthor(t *testing.T) {
	s := legate.NewSecrets("hunter2-secret-value")
	res, err := toolresult.Native(&legate.Result{Text: "token hunter2-secret-value here", Meta: provenance.Author("octocat")})
	if err != nil {
		t.Fatal(err)
	}
	res = toolresult.Mask(s, res)
	provenance.Set(res, provenance.New("github", "github.get_issue"), false)
	m, ok := provenance.Of(res)
	if text := res.Content[0].(*mcp.TextContent).Text; !ok || m.Author != "octocat" || strings.Contains(text, "hunter2") {
		t.Fatalf("mark %+v (%v), text %q", m, ok, text)
	}
	same(t, res) // the fast paths write it as encoding/json does
}
