package resultcut

import (
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/internal/jsonindent"
)

// The document. What is kept of a cut result, and paged, is its text as
// one document: the text of each text block and embedded text resource in
// order, a blank line between them (JSON indented, so that its pages break
// at lines), then the structured content as indented JSON, unless a text
// block is JSON already (tools put their structured content in a text
// block too, as the specification asks). Media are not in it: the cut
// result kept them all.

// document is a result's text as it is kept and paged; starts[i] is where
// the i-th text block of the result's content begins in it.
type document struct {
	text   string
	starts map[int]int
}

// structuredHeading starts the structured content's part of a document.
const structuredHeading = "structuredContent:\n"

// documentOf is res's document.
func documentOf(res *mcp.CallToolResult) document {
	var b strings.Builder
	d := document{starts: map[int]int{}}
	hasJSON := false
	for i, c := range res.Content {
		t, ok := textOf(c)
		if !ok {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		d.starts[i] = b.Len()
		if j, ok := indented(t); ok {
			hasJSON = true
			t = j
		}
		b.WriteString(t)
	}
	if res.StructuredContent != nil && !hasJSON {
		if raw, err := structuredJSON(res.StructuredContent); err == nil {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(structuredHeading)
			j, _ := indented(string(raw))
			b.WriteString(j)
		}
	}
	d.text = b.String()
	return d
}

// indented is t indented if it is a JSON object or array that indenting
// does not blow up (jsonindent.Indent).
func indented(t string) (string, bool) {
	b, ok := jsonindent.Indent([]byte(t))
	if !ok {
		return t, false
	}
	return string(b), true
}

// capped is text cut to at most max bytes, at a line's end where one is
// in its last quarter, else at a character's start.
func capped(text string, max int) string {
	if len(text) <= max {
		return text
	}
	end := runeStart(text, max)
	if nl := strings.LastIndexByte(text[:end], '\n'); nl >= end*3/4 {
		end = nl + 1
	}
	return text[:end]
}

// pageReserve is what a page's heading may take of the budget.
const pageReserve = 96

// pageTokens is the text a page holds within budget, reserve of it given
// to the marks it carries (Keep.PageReserve).
func pageTokens(budget, reserve int) int { return max(budget-pageReserve-reserve, 32) }

// paginate splits text into pages of at most size tokens each, ending at
// lines' ends; a line longer than a page is split at characters. It
// returns where each page starts (the first at 0); an empty text is one
// empty page.
func paginate(text string, size int) []int {
	starts := []int{0}
	var page counter
	for i := 0; i < len(text); {
		end := strings.IndexByte(text[i:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += i + 1
		}
		var line counter
		line.add(text[i:end])
		if (counter{page.ascii + line.ascii, page.other + line.other}).tokens() <= size {
			page.ascii, page.other = page.ascii+line.ascii, page.other+line.other
			i = end
			continue
		}
		if page.ascii+page.other > 0 {
			starts = append(starts, i) // the line starts a page of its own
			page = counter{}
			continue
		}
		// A line longer than a page: as much of it as fits.
		j := fitting(text[i:end], size)
		i += j
		if i < len(text) {
			starts = append(starts, i)
		}
	}
	return starts
}

// fitting is how many bytes of s, from its start and ending at a
// character's end, are estimated at most size tokens (at least one
// character).
func fitting(s string, size int) int {
	var c counter
	i := 0
	for i < len(s) {
		_, n := utf8.DecodeRuneInString(s[i:])
		next := c
		next.add(s[i : i+n])
		if next.tokens() > size && i > 0 {
			break
		}
		c, i = next, i+n
	}
	return i
}

// pageOf is the page (from 1) holding byte offset at of a document whose
// pages start at starts.
func pageOf(starts []int, at int) int {
	p := 1
	for i, s := range starts {
		if s <= at {
			p = i + 1
		}
	}
	return p
}
