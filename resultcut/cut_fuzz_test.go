package resultcut

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzCut: whatever the text, the structured content and the budget, a
// cut result is valid JSON, within its budget by the estimate, keeps its
// media, keeps structured content JSON, and keeps a text block that was
// one JSON value valid JSON; and the kept document's pages give it back
// whole.
func FuzzCut(f *testing.F) {
	f.Add("row 1\nrow 2\n\nrow 3\n", []byte(`{"a":[1,2,3],"b":"x"}`), uint16(300), true, false)
	f.Add(strings.Repeat("línea ñ 日本\n", 500), []byte(`{"rows":[{"id":1},{"id":2}],"s":"`+strings.Repeat("é", 3000)+`"}`), uint16(256), false, true)
	f.Add(strings.Repeat("x", 20000), []byte(``), uint16(0), false, false)
	f.Add(`[`+strings.Repeat(`{"k":"v"},`, 2000)+`{}]`, []byte(`[1,2]`), uint16(1000), true, true)
	f.Add("\n\n\n\xff\xfe\n", []byte(`{"x":[[[[["deep"]]]]]}`), uint16(260), false, false)
	f.Fuzz(func(t *testing.T, text string, structured []byte, budget uint16, schema, media bool) {
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: text + "\n" + text}}}
		if json.Valid([]byte(text)) {
			res.Content = res.Content[:1]
		}
		if media {
			res.Content = append(res.Content, &mcp.ImageContent{Data: []byte(text), MIMEType: "image/png"})
		}
		if json.Valid(structured) && len(structured) > 0 && structured[0] == '{' {
			res.StructuredContent = json.RawMessage(structured)
		}
		out, c := Cut(res, int(budget), keep, schema)
		b, err := json.Marshal(out)
		if err != nil || !json.Valid(b) {
			t.Fatalf("the cut result is no JSON: %v", err)
		}
		limit := max(int(budget), MinBudget)
		if n := ResultTokens(out); n > limit {
			t.Fatalf("%d tokens, over the budget of %d", n, limit)
		}
		if !c.Cut {
			if out != res {
				t.Fatal("a result that fits came back changed")
			}
			return
		}
		if out.StructuredContent != nil {
			if s, err := json.Marshal(out.StructuredContent); err != nil || !json.Valid(s) {
				t.Fatalf("structured content no JSON: %s", s)
			}
		}
		if media {
			last := 0
			for _, b := range out.Content {
				if _, ok := b.(*mcp.ImageContent); ok {
					last++
				}
			}
			if last != 1 {
				t.Fatalf("%d images, want 1", last)
			}
		}
		if len(res.Content) == 1 && json.Valid([]byte(text)) && strings.ContainsAny(strings.TrimSpace(text)[:1], "[{") {
			if first, ok := out.Content[0].(*mcp.TextContent); ok && !strings.HasPrefix(first.Text, "[legate:") && !json.Valid([]byte(first.Text)) {
				// Trimmed as JSON, or, when no trimming fits, cut by lines:
				// then the notice says so in the text itself.
				if !strings.Contains(first.Text, "[legate: result cut") {
					t.Fatalf("a JSON text block cut into no JSON: %.200q", first.Text)
				}
			}
		}
		checkPages(t, c.Document, c.Budget, c.Pages)
	})
}
