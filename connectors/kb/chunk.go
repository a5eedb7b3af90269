package kb

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/legate-mcp/legate/connectors/kb/extract"
)

// chunk is one passage: a run of a section's text, at most chunk_chars
// long, under the section's headings.
type chunk struct {
	headings []string
	text     string
	// hash identifies the passage by its content, with its headings: what
	// a passage ref names, the same on every replica.
	hash string
}

// chunkSections cuts each section into passages of at most max
// characters: whole paragraphs while they fit, a longer paragraph at its
// sentence ends, a longer sentence at max.
func chunkSections(sections []extract.Section, max int) []chunk {
	var out []chunk
	for _, s := range sections {
		var cur strings.Builder
		emit := func() {
			if t := strings.TrimSpace(cur.String()); t != "" {
				out = append(out, newChunk(s.Headings, t))
			}
			cur.Reset()
		}
		for _, para := range pieces(s.Text, max) {
			if cur.Len() > 0 && utf8.RuneCountInString(cur.String())+2+utf8.RuneCountInString(para) > max {
				emit()
			}
			if cur.Len() > 0 {
				cur.WriteString("\n\n")
			}
			cur.WriteString(para)
		}
		emit()
	}
	return out
}

func newChunk(headings []string, text string) chunk {
	h := sha256.New()
	for _, s := range headings {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write([]byte(text))
	return chunk{headings: headings, text: text, hash: hex.EncodeToString(h.Sum(nil)[:12])}
}

// pieces splits text into paragraphs, each at most max characters: a
// longer one is cut at sentence ends, a longer sentence at max.
func pieces(text string, max int) []string {
	var out []string
	for _, para := range strings.Split(text, "\n\n") {
		para = strings.TrimSpace(para)
		if para == "" {
			continue
		}
		if utf8.RuneCountInString(para) <= max {
			out = append(out, para)
			continue
		}
		var cur []rune
		for _, sentence := range sentences(para) {
			rs := []rune(sentence)
			if len(cur) > 0 && len(cur)+len(rs) > max {
				out = append(out, strings.TrimSpace(string(cur)))
				cur = cur[:0]
			}
			for len(rs) > max {
				out = append(out, strings.TrimSpace(string(rs[:max])))
				rs = rs[max:]
			}
			cur = append(cur, rs...)
		}
		if t := strings.TrimSpace(string(cur)); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// sentences splits s after each '.', '!' or '?' followed by a space or a
// line end, each sentence keeping what follows it.
func sentences(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s)-1; i++ {
		switch s[i] {
		case '.', '!', '?':
			if s[i+1] == ' ' || s[i+1] == '\n' {
				out = append(out, s[start:i+2])
				start = i + 2
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
