package resultcut

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
