// Package extract reads the documents of the kb connector: Markdown,
// text, HTML and PDF, each as its title, its text and its sections, the
// text under each path of headings.
package extract

import (
	"bytes"
	"fmt"
	"html"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"

	"github.com/legate-mcp/legate/connectors/htmltext"
)

// The kinds of document the connector reads.
const (
	kindMarkdown = "markdown"
	kindText     = "text"
	kindHTML     = "html"
	kindPDF      = "pdf"
)

// KindOfName is the kind of a file by its extension, "" for one the
// connector does not read.
func KindOfName(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".markdown":
		return kindMarkdown
	case ".txt", ".text":
		return kindText
	case ".html", ".htm":
		return kindHTML
	case ".pdf":
		return kindPDF
	}
	return ""
}

// KindOfContentType is the kind of a fetched page by its Content-Type,
// else by its URL path's extension.
func KindOfContentType(contentType, urlPath string) string {
	ct := strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
	switch ct {
	case "text/html", "application/xhtml+xml":
		return kindHTML
	case "text/markdown", "text/x-markdown":
		return kindMarkdown
	case "application/pdf":
		return kindPDF
	case "text/plain":
		if k := KindOfName(urlPath); k == kindMarkdown {
			return k
		}
		return kindText
	}
	return KindOfName(urlPath)
}

// Section is a run of a document's text under one path of headings.
type Section struct {
	Headings []string
	Text     string
}

// Extracted is what a document is read as: its title, its text as a
// model reads it, and its sections.
type Extracted struct {
	Title    string
	Text     string
	Sections []Section
}

// Extract reads data of kind; name (a file's or a URL path's base) is the
// title of a document that names none.
func Extract(kind, name string, data []byte) (Extracted, error) {
	switch kind {
	case kindPDF:
		return extractPDF(name, data)
	case kindHTML:
		return extractHTML(name, string(data)), nil
	}
	if !utf8.Valid(data) {
		data = bytes.ToValidUTF8(data, []byte("\uFFFD"))
	}
	if kind == kindMarkdown {
		return extractMarkdown(name, string(data)), nil
	}
	return extractText(name, string(data)), nil
}

var (
	atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)
	fence      = regexp.MustCompile("^ {0,3}(```|~~~)")
)

// extractMarkdown cuts Markdown at its ATX headings (# to ######), not
// those inside fenced code; the first level-1 heading is the title.
func extractMarkdown(name, text string) Extracted {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	out := Extracted{Text: strings.TrimSpace(text)}
	var (
		stack   [6]string // the current heading of each level
		body    []string
		inFence string
	)
	path := func() []string {
		var p []string
		for _, h := range stack {
			if h != "" {
				p = append(p, h)
			}
		}
		return p
	}
	flush := func() {
		if t := strings.TrimSpace(strings.Join(body, "\n")); t != "" {
			out.Sections = append(out.Sections, Section{Headings: path(), Text: t})
		}
		body = body[:0]
	}
	for _, line := range strings.Split(text, "\n") {
		if m := fence.FindStringSubmatch(line); m != nil {
			switch inFence {
			case "":
				inFence = m[1]
			case m[1]:
				inFence = ""
			}
		}
		m := atxHeading.FindStringSubmatch(line)
		if inFence != "" || m == nil {
			body = append(body, line)
			continue
		}
		flush()
		level := len(m[1]) - 1
		stack[level] = strings.TrimSpace(m[2])
		for i := level + 1; i < len(stack); i++ {
			stack[i] = ""
		}
		if level == 0 && out.Title == "" {
			out.Title = stack[0]
		}
	}
	flush()
	if out.Title == "" {
		out.Title = name
	}
	return out
}

// extractText reads plain text: its first line is its title when it is
// short and a blank line follows it.
func extractText(name, text string) Extracted {
	text = strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
	out := Extracted{Title: name, Text: text}
	body := text
	if first, rest, ok := strings.Cut(text, "\n"); ok && len(first) <= 120 && strings.HasPrefix(rest, "\n") {
		out.Title = strings.TrimSpace(first)
		body = strings.TrimSpace(rest)
	}
	if body != "" {
		out.Sections = []Section{{Headings: []string{out.Title}, Text: body}}
	}
	return out
}

var (
	htmlTitle   = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)
	htmlHeading = regexp.MustCompile(`(?i)<h([1-6])\b[^>]*>`)
)

// extractHTML reads HTML as text (connectors/htmltext), each heading
// element marked as a Markdown heading of its level, then as Markdown; its
// <title> is its title.
func extractHTML(name, doc string) Extracted {
	title := ""
	if m := htmlTitle.FindStringSubmatch(doc); m != nil {
		title = strings.Join(strings.Fields(html.UnescapeString(m[1])), " ")
	}
	marked := htmlHeading.ReplaceAllStringFunc(doc, func(tag string) string {
		level := int(tag[2] - '0')
		return tag + "\n" + strings.Repeat("#", level) + " "
	})
	out := extractMarkdown(name, htmltext.Text(marked))
	if title != "" {
		out.Title = title
	}
	return out
}

// extractPDF reads the text of each page of a PDF (github.com/ledongthuc/pdf);
// each page is a Section under the title and "Page N". The document's
// Title, else its first line, is its title.
func extractPDF(name string, data []byte) (out Extracted, err error) {
	defer func() {
		if r := recover(); r != nil { // the reader panics on some malformed files
			err = fmt.Errorf("not a PDF it can read: %v", r)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return out, fmt.Errorf("not a PDF it can read: %v", err)
	}
	if info := r.Trailer().Key("Info"); !info.IsNull() {
		out.Title = strings.TrimSpace(info.Key("Title").Text())
	}
	var all []string
	fonts := map[string]*pdf.Font{}
	for i := 1; i <= r.NumPage(); i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			continue
		}
		text, err := p.GetPlainText(fonts)
		if err != nil {
			return out, fmt.Errorf("page %d: %v", i, err)
		}
		text = foldLines(text)
		if text == "" {
			continue
		}
		if out.Title == "" {
			out.Title, _, _ = strings.Cut(text, "\n")
		}
		out.Sections = append(out.Sections, Section{Headings: []string{"", fmt.Sprintf("Page %d", i)}, Text: text})
		all = append(all, text)
	}
	if out.Title == "" {
		out.Title = name
	}
	for i := range out.Sections {
		out.Sections[i].Headings[0] = out.Title
	}
	out.Text = strings.Join(all, "\n\n")
	return out, nil
}

// foldLines trims each line of s, keeps one blank line between
// paragraphs, and trims s.
func foldLines(s string) string {
	var out []string
	blank := false
	for _, l := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" {
			blank = len(out) > 0
			continue
		}
		if blank {
			out = append(out, "")
			blank = false
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
