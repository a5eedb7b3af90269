package resultcut

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var keep = Keep{Ref: "rtestref", ReadTool: "legate__result_read", Retention: time.Hour, MaxBytes: 4 << 20}

func TestTokens(t *testing.T) {
	for name, c := range map[string]struct {
		in   string
		want int
	}{
		"empty":          {"", 0},
		"one byte":       {"a", 1},
		"four bytes":     {"abcd", 1},
		"five bytes":     {"abcde", 2},
		"cyrillic":       {"привет", 6},
		"cjk and ascii":  {"日本語 text", 3 + 2},
		"invalid utf8":   {"\xff\xfe", 2},
		"a line of text": {strings.Repeat("word ", 100), 125},
	} {
		if got := Tokens(c.in); got != c.want {
			t.Errorf("%s: Tokens(%q) = %d, want %d", name, c.in, got, c.want)
		}
	}
}

// lines is n numbered lines.
func lines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "row %d: some value for this row\n", i)
	}
	return b.String()
}

func TestCutLeavesAFittingResultAlone(t *testing.T) {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: lines(10)}}}
	out, c := Cut(res, 1000, keep, false)
	if out != res || c.Cut {
		t.Fatalf("a result within the budget was cut: %+v", c)
	}
}

func TestCutLines(t *testing.T) {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: lines(10000)}}}
	out, c := Cut(res, 1000, keep, false)
	if !c.Cut || ResultTokens(out) > 1000 {
		t.Fatalf("cut %v to %d tokens, want at most 1000", c.Cut, ResultTokens(out))
	}
	if len(out.Content) != 1 {
		t.Fatalf("%d content blocks, want the one", len(out.Content))
	}
	text := out.Content[0].(*mcp.TextContent).Text
	if !strings.HasPrefix(text, "row 1: ") || !strings.HasSuffix(text, "row 10000: some value for this row\n") {
		t.Errorf("head or tail missing:\n%s", text)
	}
	for _, want := range []string{"[legate: result cut to fit its budget of 1,000 tokens", "lines are cut", `legate__result_read {"ref":"rtestref","page":`, "legate://results/rtestref", "kept for 1h"} {
		if !strings.Contains(text, want) {
			t.Errorf("the notice lacks %q:\n%s", want, text)
		}
	}
	// Every line kept is whole.
	for _, l := range strings.Split(text, "\n") {
		if l != "" && !strings.HasPrefix(l, "row ") && !strings.HasPrefix(l, "[legate: ") {
			t.Errorf("a line cut in the middle: %q", l)
		}
	}
	if out.Meta[CutMetaKey] == nil {
		t.Error("no cut in _meta")
	}
	if res.Content[0].(*mcp.TextContent).Text != lines(10000) {
		t.Error("Cut changed its argument")
	}
	// The document is the whole text, and its pages give it back, each
	// within the budget.
	if c.Document != lines(10000) {
		t.Fatal("the document is not the text")
	}
	checkPages(t, c.Document, c.Budget, c.Pages)
}

func checkPages(t *testing.T, doc string, budget, pages int) {
	t.Helper()
	starts := paginate(doc, pageTokens(budget, 0))
	if len(starts) != pages {
		t.Fatalf("%d pages, Cutting says %d", len(starts), pages)
	}
	var whole strings.Builder
	for i, s := range starts {
		end := len(doc)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		if Tokens(doc[s:end]) > pageTokens(budget, 0) {
			t.Fatalf("page %d: %d tokens, over %d", i+1, Tokens(doc[s:end]), pageTokens(budget, 0))
		}
		whole.WriteString(doc[s:end])
	}
	if whole.String() != doc {
		t.Fatal("the pages do not make the document")
	}
}

func TestCutKeepsParagraphs(t *testing.T) {
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, "Paragraph %d, first line.\nIts second line.\nIts third line.\n\n", i)
	}
	out, _ := Cut(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}, 600, keep, false)
	text := out.Content[0].(*mcp.TextContent).Text
	head, _, _ := strings.Cut(text, "[legate:")
	if !strings.HasSuffix(strings.TrimRight(head, "\n"), "Its third line.") {
		t.Errorf("the head does not end at a paragraph's end:\n%s", head)
	}
}

func TestCutOneLongLine(t *testing.T) {
	long := strings.Repeat("lorem ipsum dolor sit amet ", 20000)
	out, c := Cut(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: long}}}, 500, keep, false)
	if ResultTokens(out) > 500 || !c.Cut {
		t.Fatalf("%d tokens", ResultTokens(out))
	}
	text := out.Content[0].(*mcp.TextContent).Text
	if !strings.HasPrefix(text, "lorem ipsum") || !strings.Contains(text, "bytes are cut") || !strings.HasSuffix(text, "sit amet ") {
		t.Errorf("cut:\n%s", text)
	}
	checkPages(t, c.Document, c.Budget, c.Pages)
}

func TestCutNeverCutsMedia(t *testing.T) {
	img := &mcp.ImageContent{Data: []byte(strings.Repeat("P", 100000)), MIMEType: "image/png"}
	blob := &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a.bin", Blob: []byte(strings.Repeat("B", 100000))}}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: lines(3000)}, img, &mcp.TextContent{Text: lines(3000)}, blob}}
	out, _ := Cut(res, 800, keep, false)
	if ResultTokens(out) > 800 {
		t.Fatalf("%d tokens", ResultTokens(out))
	}
	var media []mcp.Content
	for _, c := range out.Content {
		if _, ok := textOf(c); !ok {
			media = append(media, c)
		}
	}
	if len(media) != 2 || media[0] != img || media[1] != blob {
		t.Fatalf("media: %v", media)
	}
}

func TestCutStructured(t *testing.T) {
	rows := make([]map[string]any, 5000)
	for i := range rows {
		rows[i] = map[string]any{"id": i, "name": fmt.Sprintf("row %d", i)}
	}
	structured := map[string]any{"rows": rows, "total": 5000, "note": strings.Repeat("x", 50000)}
	raw, _ := json.Marshal(structured)
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}, StructuredContent: json.RawMessage(raw)}
	for name, schema := range map[string]bool{"with an output schema": true, "without": false} {
		t.Run(name, func(t *testing.T) {
			out, _ := Cut(res, 2000, keep, schema)
			if n := ResultTokens(out); n > 2000 {
				t.Fatalf("%d tokens", n)
			}
			b, err := json.Marshal(out.StructuredContent)
			if err != nil || out.StructuredContent == nil {
				t.Fatalf("structured content: %v", err)
			}
			var got struct {
				Rows  []any  `json:"rows"`
				Total *int   `json:"total"`
				Note  string `json:"note"`
			}
			if err := json.Unmarshal(b, &got); err != nil || got.Total == nil || *got.Total != 5000 || len(got.Rows) == 0 {
				t.Fatalf("trimmed: %s (%v)", b, err)
			}
			marker := false
			for _, r := range got.Rows {
				if _, ok := r.(string); ok {
					marker = true
				}
			}
			if marker == schema {
				t.Errorf("a marker item in the rows: %v, want %v", marker, !schema)
			}
			if !strings.Contains(got.Note, "bytes cut]") {
				t.Errorf("the long string was not shortened: %.80s", got.Note)
			}
			text := out.Content[0].(*mcp.TextContent).Text
			if !json.Valid([]byte(text)) {
				t.Errorf("the JSON text is no longer JSON: %.200s", text)
			}
			last := out.Content[len(out.Content)-1].(*mcp.TextContent).Text
			if !strings.Contains(last, "structuredContent is trimmed, still valid: 1 arrays cut in the middle") {
				t.Errorf("notice: %s", last)
			}
		})
	}
}

func TestCutWithoutKeeping(t *testing.T) {
	out, _ := Cut(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: lines(2000)}}}, 300, Keep{}, false)
	if text := out.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "could not be kept") || strings.Contains(text, "result_read") {
		t.Errorf("notice:\n%s", text)
	}
}

func TestCutRaisesATinyBudget(t *testing.T) {
	out, c := Cut(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: lines(2000)}}}, 3, keep, false)
	if c.Budget != MinBudget || ResultTokens(out) > MinBudget {
		t.Fatalf("budget %d, %d tokens", c.Budget, ResultTokens(out))
	}
}

func TestCutCapsTheKeptDocument(t *testing.T) {
	k := keep
	k.MaxBytes = 10000
	out, c := Cut(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: lines(5000)}}}, 500, k, false)
	if !c.Truncated || len(c.Document) > 10000 || !strings.HasPrefix(lines(5000), c.Document) {
		t.Fatalf("truncated %v, %d bytes", c.Truncated, len(c.Document))
	}
	if text := out.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "Only its first") {
		t.Errorf("notice:\n%s", text)
	}
}

// TestCutKeepsDeepJSONUnindented: JSON nested thousands deep, whose
// indentation would grow as the square of its depth (8 KB to 32 MB), is
// kept as written; JSON of usual depth is indented.
func TestCutKeepsDeepJSONUnindented(t *testing.T) {
	deep := strings.Repeat("[", 4000) + strings.Repeat("]", 4000)
	_, c := Cut(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: deep}}}, MinBudget, keep, false)
	if !c.Cut || c.Document != deep {
		t.Fatalf("deep JSON kept as %d bytes (cut %v), want the %d bytes as written", len(c.Document), c.Cut, len(deep))
	}
	flat := `[` + strings.Repeat(`{"id":1,"tags":["a","b"]},`, 400) + `{}]`
	_, c = Cut(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: flat}}}, MinBudget, keep, false)
	if !strings.Contains(c.Document, "\n  {\n    \"id\": 1,") {
		t.Fatalf("JSON of usual depth kept unindented: %.80q", c.Document)
	}
}
