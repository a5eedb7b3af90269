// Package htmltext reads HTML as text: the body of an e-mail or a
// message whose only text is HTML, for a model to read.
package htmltext

import (
	"html"
	"strings"
)

// blockTags end a line in Text where they open; the ones marked
// true where they close too.
var blockTags = map[string]bool{"p": true, "br": false, "div": true, "li": false, "tr": false, "h1": true, "h2": true, "h3": true,
	"h4": true, "h5": true, "h6": true, "table": true, "ul": true, "ol": true, "blockquote": true, "hr": false, "pre": true}

// Text is the text of an HTML body: tags dropped (a block element
// ends a line), script, style and head skipped, entities decoded, runs of
// blanks folded. It is for reading, not for rendering.
func Text(s string) string {
	var out strings.Builder
	for len(s) > 0 {
		lt := strings.IndexByte(s, '<')
		if lt < 0 {
			out.WriteString(html.UnescapeString(s))
			break
		}
		out.WriteString(html.UnescapeString(s[:lt]))
		s = s[lt:]
		if strings.HasPrefix(s, "<!--") {
			end := strings.Index(s, "-->")
			if end < 0 {
				break
			}
			s = s[end+3:]
			continue
		}
		gt := strings.IndexByte(s, '>')
		if gt < 0 {
			break
		}
		closing := strings.HasPrefix(s, "</")
		tag := strings.ToLower(strings.TrimLeft(s[1:gt], "/"))
		if i := strings.IndexAny(tag, " \t\r\n/"); i >= 0 {
			tag = tag[:i]
		}
		s = s[gt+1:]
		if !closing && (tag == "script" || tag == "style" || tag == "head") {
			// Skip to the element's end, whatever it holds ("x<1").
			end := strings.Index(strings.ToLower(s), "</"+tag)
			if end < 0 {
				break
			}
			s = s[end:]
			continue
		}
		if onClose, block := blockTags[tag]; block && (!closing || onClose) {
			out.WriteByte('\n')
		}
	}
	return foldBlanks(out.String())
}

// foldBlanks folds runs of spaces into one and of blank lines into one
// empty line, and trims.
func foldBlanks(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	var out []string
	blank := false
	for _, l := range lines {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" {
			if !blank && len(out) > 0 {
				out = append(out, "")
			}
			blank = true
			continue
		}
		blank = false
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
