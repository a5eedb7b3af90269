package kb

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

// kindOfName is the kind of a file by its extension, "" for one the
// connector does not read.
func kindOfName(name string) string {
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

// kindOfContentType is the kind of a fetched page by its Content-Type,
// else by its URL path's extension.
func kindOfContentType(contentType, urlPath string) string {
	ct := strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
	switch ct {
	case "text/html", "application/xhtml+xml":
		return kindHTML
	case "text/markdown", "text/x-markdown":
		return kindMarkdown
	case "application/pdf":
		return kindPDF
	case "text/plain":
		if k := kindOfName(urlPath); k == kindMarkdown {
			return k
		}
		return kindText
	}
	return kindOfName(urlPath)
}

// section is a run of a document's text under one path of headings.
type section struct {
	headings []string
	text     string
}

// extracted is what a document is read as: its title, its text as a
// model reads it, and its sections.
type extracted struct {
	title    string
	text     string
	sections []section
}

// extract reads data of kind; name (a file's or a URL path's base) is the
// title of a document that names none.
func extract(kind, name string, data []byte) (extracted, error) {
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
func extractMarkdown(name, text string) extracted {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	out := extracted{text: strings.TrimSpace(text)}
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
			out.sections = append(out.sections, section{headings: path(), text: t})
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
		if level == 0 && out.title == "" {
			out.title = stack[0]
		}
	}
	flush()
	if out.title == "" {
		out.title = name
	}
	return out
}

// extractText reads plain text: its first line is its title when it is
// short and a blank line follows it.
func extractText(name, text string) extracted {
	text = strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
	out := extracted{title: name, text: text}
	body := text
	if first, rest, ok := strings.Cut(text, "\n"); ok && len(first) <= 120 && strings.HasPrefix(rest, "\n") {
		out.title = strings.TrimSpace(first)
		body = strings.TrimSpace(rest)
	}
	if body != "" {
		out.sections = []section{{headings: []string{out.title}, text: body}}
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
func extractHTML(name, doc string) extracted {
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
		out.title = title
	}
	return out
}

// extractPDF reads the text of each page of a PDF (github.com/ledongthuc/pdf);
// each page is a section under the title and "Page N". The document's
// Title, else its first line, is its title.
func extractPDF(name string, data []byte) (out extracted, err error) {
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
		out.title = strings.TrimSpace(info.Key("Title").Text())
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
		if out.title == "" {
			out.title, _, _ = strings.Cut(text, "\n")
		}
		out.sections = append(out.sections, section{headings: []string{"", fmt.Sprintf("Page %d", i)}, text: text})
		all = append(all, text)
	}
	if out.title == "" {
		out.title = name
	}
	for i := range out.sections {
		out.sections[i].headings[0] = out.title
	}
	out.text = strings.Join(all, "\n\n")
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
