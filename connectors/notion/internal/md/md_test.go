package md_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors/notion/internal/md"
)

// shape is a block as "type:text" with its runs' annotations marked:
// *bold*, _italic_, `code`, ~strike~, [text](link).
func shape(b md.NewBlock) string {
	var out strings.Builder
	out.WriteString(b.Type + ":")
	for _, r := range b.Body.RichText {
		t := r.Text.Content
		if a := r.Annotations; a != nil {
			if a.Code {
				t = "`" + t + "`"
			}
			if a.Bold {
				t = "*" + t + "*"
			}
			if a.Italic {
				t = "_" + t + "_"
			}
			if a.Strikethrough {
				t = "~" + t + "~"
			}
		}
		if r.Text.Link != nil {
			t = "[" + t + "](" + r.Text.Link.URL + ")"
		}
		out.WriteString(t)
	}
	if b.Body.Checked != nil && *b.Body.Checked {
		out.WriteString(" (checked)")
	}
	if b.Type == "code" {
		out.WriteString(" (" + b.Body.Language + ")")
	}
	return out.String()
}

func TestBlocks(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                                 "paragraph:plain",
		"two\nlines\n\nnext":                    "paragraph:two\nlines|paragraph:next",
		"# A\n## B\n### C\n#### D":              "heading_1:A|heading_2:B|heading_3:C|heading_3:D",
		"- a\n* b\n+ c\n  - nested":             "bulleted_list_item:a|bulleted_list_item:b|bulleted_list_item:c|bulleted_list_item:nested",
		"1. one\n2) two":                        "numbered_list_item:one|numbered_list_item:two",
		"- [ ] open\n- [x] shut":                "to_do:open|to_do:shut (checked)",
		"> a\n> b\n\nafter":                     "quote:a\nb|paragraph:after",
		"```js\nlet x\n\ny\n```":                "code:let x\n\ny (javascript)",
		"```cobol-ish\nx\n```":                  "code:x (plain text)",
		"```\nunclosed":                         "code:unclosed (plain text)",
		"---":                                   "divider:",
		"**bold** and _it_ and `a*b*c`":         "paragraph:*bold* and _it_ and `a*b*c`",
		"snake_case_name stays":                 "paragraph:snake_case_name stays",
		"see [doc](https://a.example/x) now":    "paragraph:see [doc](https://a.example/x) now",
		"~~gone~~ **[bold link](https://b.c)**": "paragraph:~gone~ [*bold link*](https://b.c)",
		"[not a link](javascript:alert(1))":     "paragraph:[not a link](javascript:alert(1))",
	} {
		var got []string
		for _, b := range md.Blocks(in) {
			got = append(got, shape(b))
		}
		if g := strings.Join(got, "|"); g != want {
			t.Errorf("%q:\n got %s\nwant %s", in, g, want)
		}
	}
}

func TestLongTextIsSplitIntoRuns(t *testing.T) {
	runs := md.PlainRuns(strings.Repeat("é", 4500))
	if len(runs) != 3 || len([]rune(runs[0].Text.Content)) != md.MaxRun || len([]rune(runs[2].Text.Content)) != 500 {
		t.Fatalf("%d runs", len(runs))
	}
}

func TestRenderReadsBack(t *testing.T) {
	var b md.Block
	raw := `{"object":"block","id":"x","type":"to_do","has_children":false,"to_do":{"checked":true,"rich_text":[
		{"type":"text","plain_text":"ship ","annotations":{"bold":true}},
		{"type":"text","plain_text":"docs","href":"https://d.example","annotations":{"code":true}}]}}`
	if err := json.Unmarshal([]byte(raw), &b); err != nil {
		t.Fatal(err)
	}
	if got := md.RenderBlock(&b, 0, ""); got != "- [x] **ship** [`docs`](https://d.example)" {
		t.Fatalf("rendered %q", got)
	}
	b = md.Block{Type: "unsupported"}
	if got := md.RenderBlock(&b, 0, ""); got != "(unsupported)" {
		t.Fatalf("rendered %q", got)
	}
}
