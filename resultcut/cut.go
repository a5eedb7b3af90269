package resultcut

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MinBudget is the smallest budget a result is cut to: a smaller one is
// raised to it, so that a cut result has room for its notice and a head
// and tail worth reading.
const MinBudget = 256

// CutMetaKey is the key of a cut result's _meta that says, for programs,
// what the notice says: the reference of the kept whole, the budget, the
// whole's estimated tokens and its pages.
const CutMetaKey = "io.legate/result-cut"

// Keep is what the notice of a cut result says of its kept whole.
type Keep struct {
	// Ref is the reference of the kept whole; "" when it could not be kept.
	Ref string
	// ReadTool is the name the caller calls legate.result_read by.
	ReadTool string
	// Retention is how long the whole is kept.
	Retention time.Duration
	// MaxBytes caps the kept document (0: no cap).
	MaxBytes int
}

// Cutting is what Cut did.
type Cutting struct {
	// Cut is false when the result fitted, and came back as it was.
	Cut bool
	// Tokens is the whole result's estimate, Budget the budget it was cut to.
	Tokens, Budget int
	// Document is the result's text as it is kept (capped at
	// Keep.MaxBytes), Pages how many pages of Budget it makes.
	Document string
	Pages    int
	// Truncated says the document was capped: its end is not kept.
	Truncated bool
}

// Cut returns res cut to at most budget tokens by the estimate
// (ResultTokens), or res itself when it fits (or asks for input: it is
// not a tool's answer yet). Text is cut by lines, keeping a head and a
// tail around a notice of what was cut and how to read the whole (k); a
// text block or structured content that is JSON is trimmed as JSON
// (trimToFit), staying valid; media are never cut. schema says the tool
// declares an output schema: trimmed structured content then gains no
// marker items. res is not changed.
func Cut(res *mcp.CallToolResult, budget int, k Keep, schema bool) (*mcp.CallToolResult, Cutting) {
	budget = max(budget, MinBudget)
	if res == nil || res.NeedsInput() {
		return res, Cutting{}
	}
	total := ResultTokens(res)
	if total <= budget {
		return res, Cutting{}
	}
	doc := documentOf(res)
	kept := doc.text
	if k.MaxBytes > 0 {
		kept = capped(kept, k.MaxBytes)
	}
	c := &cutter{res: res, budget: budget, total: total, keep: k, schema: schema, doc: doc,
		pages: paginate(kept, pageTokens(budget)), kept: len(kept), truncated: len(kept) < len(doc.text)}
	return c.cut(), Cutting{Cut: true, Tokens: total, Budget: budget, Document: kept, Pages: len(c.pages), Truncated: c.truncated}
}

// cutter cuts one result.
type cutter struct {
	res           *mcp.CallToolResult
	budget, total int
	keep          Keep
	schema        bool
	doc           document
	pages         []int
	kept          int // bytes of the document kept
	truncated     bool
}

// what a cut dropped, for the notice.
type dropped struct {
	text       *textDrop // lines of text
	json       jsonCut   // of a text block that is JSON
	structured jsonCut
	noStruct   bool // structured content left out
}

type textDrop struct{ lines, bytes, tokens, page int }

// cut cuts within the budget: the notice's room is set aside first, the
// rest shared between text and structured content; a try that ends over
// the budget (the notice longer than its room) is tried again with less.
func (c *cutter) cut() *mcp.CallToolResult {
	worst := dropped{text: &textDrop{1 << 40, 1 << 40, 1 << 40, len(c.pages)}, json: bigCut, structured: bigCut}
	avail := c.budget - Tokens(c.notice(worst))
	for range 8 {
		out := c.try(max(avail, 0))
		over := ResultTokens(out) - c.budget
		if over > 0 {
			avail -= max(over, 16)
			continue
		}
		// The notice's room was set aside for the longest one: what it
		// left goes to the text, if that fits still.
		if over < -16 {
			if more := c.try(avail - over); ResultTokens(more) <= c.budget {
				return more
			}
		}
		return out
	}
	return c.bare()
}

var bigCut = jsonCut{1 << 30, 1 << 40, 1 << 30, 1 << 40}

// try cuts with avail tokens for the text and structured content.
func (c *cutter) try(avail int) *mcp.CallToolResult {
	out := *c.res
	out.Content = nil
	out.Meta = c.meta()
	var units []int // indices of the text blocks
	textTokens := 0
	for i, b := range c.res.Content {
		if t, ok := textOf(b); ok {
			units = append(units, i)
			textTokens += Tokens(t)
		}
	}
	var raw []byte
	structTokens := 0
	if c.res.StructuredContent != nil {
		raw, _ = structuredJSON(c.res.StructuredContent)
		structTokens = Tokens(string(raw))
	}
	forText, forStruct := share(avail, textTokens, structTokens)
	var d dropped
	if structTokens > forStruct {
		b, jc, ok := trimJSON(raw, forStruct, !c.schema)
		out.StructuredContent, d.structured, d.noStruct = nil, jc, !ok
		if ok {
			out.StructuredContent = json.RawMessage(b)
		}
	}
	if textTokens <= forText {
		out.Content = c.res.Content
		out.Content = append(out.Content[:len(out.Content):len(out.Content)], &mcp.TextContent{Text: c.notice(d)})
		return &out
	}
	if len(units) == 1 {
		if tc, ok := c.res.Content[units[0]].(*mcp.TextContent); ok {
			if b, jc, ok := trimJSON([]byte(tc.Text), forText, true); ok && jc.any() {
				d.json = jc
				out.Content = make([]mcp.Content, 0, len(c.res.Content)+1)
				for i, b0 := range c.res.Content {
					if i == units[0] {
						b0 = withText(b0, string(b))
					}
					out.Content = append(out.Content, b0)
				}
				out.Content = append(out.Content, &mcp.TextContent{Text: c.notice(d)})
				return &out
			}
		}
	}
	out.Content = c.cutLines(units, forText, d)
	return &out
}

// share splits avail between text and structured content of t and s
// tokens: a part under half keeps all of it, the other the rest; else half each.
func share(avail, t, s int) (forText, forStruct int) {
	switch {
	case s == 0:
		return avail, 0
	case t == 0:
		return 0, avail
	case t <= avail/2:
		return t, avail - t
	case s <= avail/2:
		return avail - s, s
	}
	return avail - avail/2, avail / 2
}

// trimJSON trims the JSON b to budget tokens; ok is false if b is no JSON
// object or array, or does not fit however trimmed.
func trimJSON(b []byte, budget int, markers bool) ([]byte, jsonCut, bool) {
	s := strings.TrimSpace(string(b))
	if s == "" || s[0] != '{' && s[0] != '[' {
		return nil, jsonCut{}, false
	}
	v, err := decodeJSON([]byte(s))
	if err != nil {
		return nil, jsonCut{}, false
	}
	return trimToFit(v, budget, markers)
}

// bare is the result with its media and the notice alone: what is left
// when nothing else fits.
func (c *cutter) bare() *mcp.CallToolResult {
	out := *c.res
	out.Meta, out.StructuredContent, out.Content = c.meta(), nil, nil
	var d dropped
	for _, b := range c.res.Content {
		if _, ok := textOf(b); !ok {
			out.Content = append(out.Content, b)
		}
	}
	d.text = &textDrop{bytes: len(c.doc.text), tokens: c.total, lines: strings.Count(c.doc.text, "\n"), page: 1}
	d.noStruct = c.res.StructuredContent != nil
	out.Content = append(out.Content, &mcp.TextContent{Text: c.notice(d)})
	return &out
}

// meta is the cut result's _meta: the result's own, and CutMetaKey.
func (c *cutter) meta() mcp.Meta {
	m := maps.Clone(c.res.Meta)
	if m == nil {
		m = mcp.Meta{}
	}
	cut := map[string]any{"budget_tokens": c.budget, "result_tokens": c.total, "pages": len(c.pages)}
	if c.keep.Ref != "" {
		cut["ref"] = c.keep.Ref
	}
	m[CutMetaKey] = cut
	return m
}

// cutLines cuts the text blocks at units of c.res.Content to forText
// tokens, keeping a head (two thirds) and a tail (one third) by whole
// lines, at a paragraph's end where one is near, and puts the notice
// between them.
func (c *cutter) cutLines(units []int, forText int, d dropped) []mcp.Content {
	texts := make([]string, len(units))
	offs := make([]int, len(units)+1) // where each starts in their concatenation
	for u, i := range units {
		texts[u], _ = textOf(c.res.Content[i])
		offs[u+1] = offs[u] + len(texts[u])
	}
	s := span{texts: texts, offs: offs}
	headEnd := s.forward(forText - forText/3)
	tailStart := s.backward(forText/3, headEnd)

	drop := &textDrop{bytes: tailStart - headEnd}
	var dc counter
	noticeUnit := -1
	for u := range texts {
		a, b := clamp(headEnd-offs[u], len(texts[u])), clamp(tailStart-offs[u], len(texts[u]))
		dc.add(texts[u][a:b])
		drop.lines += strings.Count(texts[u][a:b], "\n")
		if noticeUnit < 0 && headEnd <= offs[u+1] {
			noticeUnit = u
		}
	}
	drop.tokens = dc.tokens()
	at := c.doc.starts[units[noticeUnit]] + min(headEnd-offs[noticeUnit], len(texts[noticeUnit]))
	if drop.page = pageOf(c.pages, at); at >= c.kept {
		drop.page = 0 // beyond what is kept
	}
	d.text = drop
	note := c.notice(d)

	out := make([]mcp.Content, 0, len(c.res.Content))
	u := 0
	for i, b := range c.res.Content {
		if u >= len(units) || units[u] != i {
			out = append(out, b) // media stay, wherever they are
			continue
		}
		t := texts[u]
		head, tail := t[:clamp(headEnd-offs[u], len(t))], t[clamp(tailStart-offs[u], len(t)):]
		switch {
		case u == noticeUnit:
			parts := []string{}
			for _, p := range []string{strings.TrimRight(head, "\n"), note, strings.TrimLeft(tail, "\n")} {
				if p != "" {
					parts = append(parts, p)
				}
			}
			out = append(out, withText(b, strings.Join(parts, "\n\n")))
		case head+tail != "":
			out = append(out, withText(b, head+tail))
		}
		u++
	}
	return out
}

func clamp(i, n int) int { return min(max(i, 0), n) }

// span is the text blocks of a result as one text: texts[u] starts at
// offs[u] of their concatenation.
type span struct {
	texts []string
	offs  []int
}

// forward is where a head of at most limit tokens ends: whole lines from
// the start, ended at a paragraph's end when one ends within its last
// quarter; a line that does not fit is cut, at a space near its end, if
// the head holds less than half of limit without it.
func (s span) forward(limit int) int {
	var c counter
	para, paraTokens := -1, 0
	for u, t := range s.texts {
		for i := 0; i < len(t); {
			end := len(t)
			if nl := strings.IndexByte(t[i:], '\n'); nl >= 0 {
				end = i + nl + 1
			}
			next := c
			next.add(t[i:end])
			if next.tokens() > limit {
				if c.tokens() < limit/2 {
					return s.offs[u] + i + spaceBefore(t[i:end], fitting(t[i:end], limit-c.tokens()))
				}
				if para >= 0 && paraTokens >= c.tokens()*3/4 {
					return para
				}
				return s.offs[u] + i
			}
			c, i = next, end
			if blankLineEndingAt(t, end) {
				para, paraTokens = s.offs[u]+end, c.tokens()
			}
		}
	}
	return s.offs[len(s.texts)]
}

// backward is where a tail of at most limit tokens starts, not before
// from: as forward, from the end.
func (s span) backward(limit, from int) int {
	var c counter
	para, paraTokens := -1, 0
	for u := len(s.texts) - 1; u >= 0; u-- {
		t := s.texts[u]
		lo := clamp(from-s.offs[u], len(t))
		for end := len(t); end > lo; {
			start := lo
			if nl := strings.LastIndexByte(t[lo:max(end-1, lo)], '\n'); nl >= 0 {
				start = lo + nl + 1
			}
			next := c
			next.add(t[start:end])
			if next.tokens() > limit {
				if c.tokens() < limit/2 {
					n := fittingBack(t[start:end], limit-c.tokens())
					return s.offs[u] + end - spaceAfter(t[start:end], n)
				}
				if para >= 0 && paraTokens >= c.tokens()*3/4 {
					return para
				}
				return s.offs[u] + end
			}
			c, end = next, start
			if blankLineEndingAt(t, start) {
				para, paraTokens = s.offs[u]+start, c.tokens()
			}
		}
		if lo > 0 {
			return s.offs[u] + lo
		}
	}
	return max(from, 0)
}

// blankLineEndingAt reports whether t[:end] ends with a blank line.
func blankLineEndingAt(t string, end int) bool {
	if end < 2 || t[end-1] != '\n' {
		return false
	}
	prev := strings.LastIndexByte(t[:end-1], '\n')
	return strings.TrimSpace(t[prev+1:end-1]) == ""
}

// spaceBefore is n, moved back to just after a space within the last
// fifth of s[:n], so that a word is not split.
func spaceBefore(s string, n int) int {
	if i := strings.LastIndexFunc(s[:n], unicode.IsSpace); i >= n*4/5 && i > 0 {
		return i + 1
	}
	return n
}

// spaceAfter is n (bytes from s's end), shortened to start at a space
// within the first fifth of s[len(s)-n:].
func spaceAfter(s string, n int) int {
	tail := s[len(s)-n:]
	if i := strings.IndexFunc(tail, unicode.IsSpace); i >= 0 && i <= n/5 && i < len(tail)-1 {
		return n - i - 1
	}
	return n
}

// fittingBack is how many bytes from s's end, starting at a character,
// are estimated at most size tokens (none if size is under one).
func fittingBack(s string, size int) int {
	var c counter
	n := 0
	for n < len(s) {
		_, w := utf8.DecodeLastRuneInString(s[:len(s)-n])
		next := c
		next.add(s[len(s)-n-w : len(s)-n])
		if next.tokens() > size {
			break
		}
		c, n = next, n+w
	}
	return n
}

// notice is the text that says what a cut dropped and how to read the whole.
func (c *cutter) notice(d dropped) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[legate: result cut to fit its budget of %s tokens (the whole is ~%s).", num(c.budget), num(c.total))
	if t := d.text; t != nil {
		if t.lines > 0 {
			fmt.Fprintf(&b, " Here %s lines are cut (%s bytes, ~%s tokens).", num(t.lines), num(t.bytes), num(t.tokens))
		} else {
			fmt.Fprintf(&b, " Here %s bytes are cut (~%s tokens).", num(t.bytes), num(t.tokens))
		}
	}
	if d.json.any() {
		fmt.Fprintf(&b, " Its JSON is trimmed, still valid: %s.", d.json)
	}
	switch {
	case d.noStruct:
		b.WriteString(" structuredContent is left out: even trimmed it does not fit.")
	case d.structured.any():
		fmt.Fprintf(&b, " structuredContent is trimmed, still valid: %s.", d.structured)
	}
	k := c.keep
	if k.Ref == "" {
		b.WriteString(" The whole result could not be kept.]")
		return b.String()
	}
	page := 1
	if d.text != nil && d.text.page > 0 {
		page = d.text.page
	}
	fmt.Fprintf(&b, " The whole result is kept for %s: read it", duration(k.Retention))
	if k.ReadTool != "" {
		fmt.Fprintf(&b, " with the tool %s {\"ref\":%q,\"page\":%d} (%s pages", k.ReadTool, k.Ref, page, num(len(c.pages)))
		if d.text != nil && d.text.page > 0 {
			fmt.Fprintf(&b, "; the cut part starts on page %d", d.text.page)
		}
		b.WriteString("), or")
	}
	fmt.Fprintf(&b, " as the resource %s%s (add ?page=N for one of its %s pages).", ResourcePrefix, k.Ref, num(len(c.pages)))
	if c.truncated {
		fmt.Fprintf(&b, " Only its first %s bytes are kept.", num(c.kept))
	}
	b.WriteString("]")
	return b.String()
}

// String says what trimming JSON cut.
func (j jsonCut) String() string {
	var parts []string
	if j.Arrays > 0 {
		parts = append(parts, fmt.Sprintf("%s arrays cut in the middle (%s items)", num(j.Arrays), num(j.Items)))
	}
	if j.Strings > 0 {
		parts = append(parts, fmt.Sprintf("%s strings shortened (%s bytes)", num(j.Strings), num(j.Bytes)))
	}
	return strings.Join(parts, ", ")
}

// num writes n with thousands separators.
func num(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + num(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// duration writes d in hours and minutes.
func duration(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= time.Minute:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}
