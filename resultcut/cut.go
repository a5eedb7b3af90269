package resultcut

import (
	"encoding/json"
	"maps"
	"strings"
	"time"

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
	// PageReserve is what each page gives, of its budget, to the marks it
	// carries: the spotlight's notice and markers of a result marked as
	// third parties' (package provenance).
	PageReserve int
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
		pages: paginate(kept, pageTokens(budget, k.PageReserve)), kept: len(kept), truncated: len(kept) < len(doc.text)}
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
	// decoded holds each JSON text decodeJSON read, by its text: a cut
	// tries more than one budget, and decoding is half of a try.
	decoded map[string]decodedJSON
}

type decodedJSON struct {
	v   any
	err error
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
		b, jc, ok := c.trimJSON(raw, forStruct, !c.schema)
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
			if b, jc, ok := c.trimJSON([]byte(tc.Text), forText, true); ok && jc.any() {
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
func (c *cutter) trimJSON(b []byte, budget int, markers bool) ([]byte, jsonCut, bool) {
	s := strings.TrimSpace(string(b))
	if s == "" || s[0] != '{' && s[0] != '[' {
		return nil, jsonCut{}, false
	}
	d, ok := c.decoded[s]
	if !ok {
		d.v, d.err = decodeJSON([]byte(s))
		if c.decoded == nil {
			c.decoded = map[string]decodedJSON{}
		}
		c.decoded[s] = d
	}
	if d.err != nil {
		return nil, jsonCut{}, false
	}
	return trimToFit(d.v, budget, markers)
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
