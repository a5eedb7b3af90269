package md

import (
	"encoding/json"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Markdown to Notion blocks: the writing half of the connector's
// Markdown. It knows headings (#, ##, ### and deeper as ###), bulleted
// (-, *, +) and numbered (1. or 1)) list items, to-dos (- [ ] and
// - [x]), code fences with their language, quotes (>), dividers (---)
// and paragraphs; inline, **bold**, *italic* or _italic_, ~~strike~~,
// `code` and [links](https://…). A nested list is written flat: each
// item a block at the top level.

// NewBlock is a block to create.
type NewBlock struct {
	Type string
	Body NewBody
}

// NewBody is the object under a new block's type.
type NewBody struct {
	RichText []Run  `json:"rich_text"`
	Checked  *bool  `json:"checked,omitempty"`
	Language string `json:"language,omitempty"`
	Color    string `json:"color,omitempty"`
}

// MarshalJSON writes the block as Notion takes it.
func (b NewBlock) MarshalJSON() ([]byte, error) {
	var body any = b.Body
	if b.Type == "divider" {
		body = struct{}{}
	}
	return json.Marshal(map[string]any{"object": "block", "type": b.Type, b.Type: body})
}

// Text is the block's text, plain, as Notion gives it back.
func (b NewBlock) Text() string { return Plain(b.Body.RichText) }

// TextBlock is a block of type t holding text as plain rich text.
func TextBlock(t, text string) NewBlock {
	b := NewBlock{Type: t, Body: NewBody{RichText: PlainRuns(text)}}
	if t == "to_do" {
		b.Body.Checked = new(bool)
	}
	if t == "code" {
		b.Body.Language = "plain text"
	}
	return b
}

// MaxRun is the longest text of one rich-text run Notion takes.
const MaxRun = 2000

// PlainRuns is text as rich-text runs without Annotations.
func PlainRuns(text string) []Run { return SplitRun(text, nil, "") }

// SplitRun is text as runs of at most MaxRun characters, each with
// the Annotations and link given.
func SplitRun(text string, a *Annotations, link string) []Run {
	out := []Run{}
	for len(text) > 0 {
		n, i := 0, 0
		for i < len(text) && n < MaxRun {
			_, size := utf8.DecodeRuneInString(text[i:])
			i += size
			n++
		}
		rt := &RunText{Content: text[:i]}
		if link != "" {
			rt.Link = &struct {
				URL string `json:"url"`
			}{link}
		}
		out = append(out, Run{Type: "text", Text: rt, Annotations: a})
		text = text[i:]
	}
	return out
}

var (
	headingLine  = regexp.MustCompile(`^(#{1,6})\s+(.*)$`)
	todoLine     = regexp.MustCompile(`^[-*+]\s+\[([ xX])\]\s+(.*)$`)
	bulletLine   = regexp.MustCompile(`^[-*+]\s+(.*)$`)
	numberedLine = regexp.MustCompile(`^\d+[.)]\s+(.*)$`)
	dividerLine  = regexp.MustCompile(`^(-{3,}|\*{3,}|_{3,})$`)
)

// Blocks is Markdown text as blocks to create.
func Blocks(md string) []NewBlock {
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	var out []NewBlock
	var para, quote []string
	flush := func() {
		if len(para) > 0 {
			out = append(out, inlineBlock("paragraph", strings.Join(para, "\n")))
			para = nil
		}
		if len(quote) > 0 {
			out = append(out, inlineBlock("quote", strings.Join(quote, "\n")))
			quote = nil
		}
	}
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if fence, ok := strings.CutPrefix(line, "```"); ok {
			flush()
			var code []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				code = append(code, lines[i])
			}
			b := TextBlock("code", strings.Join(code, "\n"))
			b.Body.Language = codeLanguage(fence)
			out = append(out, b)
			continue
		}
		if q, ok := strings.CutPrefix(line, ">"); ok {
			if len(para) > 0 {
				flush()
			}
			quote = append(quote, strings.TrimPrefix(q, " "))
			continue
		}
		if line == "" || len(quote) > 0 || lineBlock(line) != nil {
			flush()
		}
		if line == "" {
			continue
		}
		if b := lineBlock(line); b != nil {
			out = append(out, *b)
			continue
		}
		para = append(para, line)
	}
	flush()
	return out
}

// lineBlock is the block a line starts on its own (a heading, a list
// item, a divider), nil for a paragraph's line.
func lineBlock(line string) *NewBlock {
	var b NewBlock
	if dividerLine.MatchString(line) {
		b = NewBlock{Type: "divider"}
	} else if m := headingLine.FindStringSubmatch(line); m != nil {
		b = inlineBlock("heading_"+string(rune('0'+min(len(m[1]), 3))), m[2])
	} else if m := todoLine.FindStringSubmatch(line); m != nil {
		b = inlineBlock("to_do", m[2])
		checked := m[1] != " "
		b.Body.Checked = &checked
	} else if m := bulletLine.FindStringSubmatch(line); m != nil {
		b = inlineBlock("bulleted_list_item", m[1])
	} else if m := numberedLine.FindStringSubmatch(line); m != nil {
		b = inlineBlock("numbered_list_item", m[1])
	} else {
		return nil
	}
	return &b
}

// inlineBlock is a block of type t whose text is inline Markdown.
func inlineBlock(t, md string) NewBlock {
	b := TextBlock(t, "")
	b.Body.RichText = Inline(md, Annotations{}, "")
	return b
}

// languages maps a code fence's language to Notion's name for it; a
// language Notion does not know is written as plain text.
var languages = map[string]string{
	"": "plain text", "text": "plain text", "txt": "plain text", "plain": "plain text",
	"go": "go", "golang": "go", "js": "javascript", "javascript": "javascript", "ts": "typescript", "typescript": "typescript",
	"py": "python", "python": "python", "sh": "shell", "shell": "shell", "bash": "bash", "zsh": "shell", "sql": "sql",
	"json": "json", "yaml": "yaml", "yml": "yaml", "html": "html", "css": "css", "java": "java", "c": "c", "cpp": "c++",
	"c++": "c++", "cs": "c#", "csharp": "c#", "rust": "rust", "rs": "rust", "ruby": "ruby", "rb": "ruby", "php": "php",
	"kotlin": "kotlin", "swift": "swift", "markdown": "markdown", "md": "markdown", "diff": "diff", "docker": "docker",
	"dockerfile": "docker", "graphql": "graphql", "xml": "xml", "toml": "toml", "mermaid": "mermaid", "scala": "scala",
}

func codeLanguage(fence string) string {
	if l, ok := languages[strings.ToLower(strings.TrimSpace(fence))]; ok {
		return l
	}
	return "plain text"
}

// inline is inline Markdown as rich-text runs, each with a and link
// besides its own Annotations.
func Inline(md string, a Annotations, link string) []Run {
	out := []Run{}
	var plain strings.Builder
	emit := func() {
		if plain.Len() > 0 {
			out = append(out, SplitRun(plain.String(), annotated(a), link)...)
			plain.Reset()
		}
	}
	for i := 0; i < len(md); {
		if inner, end, sub, ok := span(md, i, a); ok {
			emit()
			if sub.Code {
				out = append(out, SplitRun(inner, annotated(sub), link)...) // no Markdown inside code
			} else {
				out = append(out, Inline(inner, sub, link)...)
			}
			i = end
			continue
		}
		if text, url, end, ok := linkAt(md, i); ok && link == "" {
			emit()
			out = append(out, Inline(text, a, url)...)
			i = end
			continue
		}
		plain.WriteByte(md[i])
		i++
	}
	emit()
	return out
}

// annotated is a, nil when it sets nothing.
func annotated(a Annotations) *Annotations {
	if a == (Annotations{}) {
		return nil
	}
	return &a
}

// span reads an emphasis or code span at md[i:]: its inner text, the
// index after it, and the Annotations inside.
func span(md string, i int, a Annotations) (inner string, end int, sub Annotations, ok bool) {
	for _, d := range []struct {
		delim string
		set   func(*Annotations)
	}{
		{"`", func(a *Annotations) { a.Code = true }},
		{"**", func(a *Annotations) { a.Bold = true }},
		{"__", func(a *Annotations) { a.Bold = true }},
		{"~~", func(a *Annotations) { a.Strikethrough = true }},
		{"*", func(a *Annotations) { a.Italic = true }},
		{"_", func(a *Annotations) { a.Italic = true }},
	} {
		if !strings.HasPrefix(md[i:], d.delim) {
			continue
		}
		if d.delim[0] == '_' && i > 0 && isWord(md[i-1]) {
			return "", 0, a, false // snake_case
		}
		start := i + len(d.delim)
		n := strings.Index(md[start:], d.delim)
		if n <= 0 {
			continue
		}
		close := start + n
		if d.delim[0] == '_' && close+len(d.delim) < len(md) && isWord(md[close+len(d.delim)]) {
			continue
		}
		sub = a
		d.set(&sub)
		return md[start:close], close + len(d.delim), sub, true
	}
	return "", 0, a, false
}

func isWord(c byte) bool {
	return c < utf8.RuneSelf && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)))
}

// linkPattern is [text](url) at the start of a string.
var linkPattern = regexp.MustCompile(`^\[([^\]]+)\]\((https?://[^)\s]+|mailto:[^)\s]+)\)`)

// linkAt reads a link at md[i:].
func linkAt(md string, i int) (text, url string, end int, ok bool) {
	m := linkPattern.FindStringSubmatch(md[i:])
	if m == nil {
		return "", "", 0, false
	}
	return m[1], m[2], i + len(m[0]), true
}
