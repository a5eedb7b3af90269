package resultcut

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The estimate. A model's tokenizer is not at hand (each model has its
// own), so the budget is counted with an estimate that is fast (one pass
// over the bytes, no allocation) and errs high rather than low on
// everything but dense ASCII:
//
//	tokens = ⌈ASCII bytes / 4⌉ + non-ASCII characters
//
// Four bytes of ASCII per token is the usual average of BPE tokenizers
// (cl100k, o200k, Claude's) over English prose and code: on those the
// estimate is within about 25% of a real count. Each non-ASCII character
// counts as a whole token: close for CJK text, high (up to 2×) for
// accented Latin and Cyrillic. It is low, by up to about 40%, on ASCII
// dense in digits, punctuation and short JSON keys, which tokenizers split
// finer: a budget over such results leaves that margin.

// Tokens is the estimated token count of s.
func Tokens(s string) int {
	var c counter
	c.add(s)
	return c.tokens()
}

// counter counts what the estimate needs of a text, by parts.
type counter struct{ ascii, other int }

func (c *counter) add(s string) {
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			c.ascii++
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		c.other++
		i += n
	}
}

func (c counter) tokens() int { return (c.ascii+3)/4 + c.other }

// ResultTokens is the estimated size of res as a model reads it: the text
// of its text content and of its embedded text resources, and its
// structured content as JSON. Media (images, audio, blobs) and links are
// not counted: models take them in by other means, and they are never cut.
func ResultTokens(res *mcp.CallToolResult) int {
	n := 0
	for _, c := range res.Content {
		if t, ok := textOf(c); ok {
			n += Tokens(t)
		}
	}
	if res.StructuredContent != nil {
		b, _ := structuredJSON(res.StructuredContent)
		n += Tokens(string(b))
	}
	return n
}

// textOf is the text of a content block that may be cut: plain text, or
// an embedded resource's text.
func textOf(c mcp.Content) (string, bool) {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text, true
	case *mcp.EmbeddedResource:
		if c.Resource != nil && c.Resource.Blob == nil {
			return c.Resource.Text, true
		}
	}
	return "", false
}

// withText is a copy of text block c holding text.
func withText(c mcp.Content, text string) mcp.Content {
	switch c := c.(type) {
	case *mcp.TextContent:
		d := *c
		d.Text = text
		return &d
	case *mcp.EmbeddedResource:
		d, r := *c, *c.Resource
		r.Text = text
		d.Resource = &r
		return &d
	}
	return c
}

// structuredJSON is structured content as JSON.
func structuredJSON(v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(v)
}
