package resultcut

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Trimming JSON. A JSON value over its share of the budget is trimmed
// where the bulk of such values is, and where trimming keeps the value's
// shape: an array longer than k keeps its first ⌈2k/3⌉ and last ⌊k/3⌋
// items, a string longer than l bytes its first 2l/3 and last l/3 bytes
// around a note of what was cut. Objects keep every key: required
// properties stay present. Where the tool declares an output schema,
// nothing is added to arrays (a marker item would break their item
// schema); elsewhere the cut items' place holds a marker string saying how
// many. k and l tighten step by step (ladder) until the value fits.

// jsonCut counts what trimming a JSON value dropped.
type jsonCut struct {
	Arrays, Items, Strings, Bytes int
}

func (c jsonCut) any() bool { return c.Arrays+c.Strings > 0 }

// ladder are the (items, string bytes) limits tried in turn, loosest first.
var ladder = [][2]int{{4096, 65536}, {1024, 16384}, {256, 8192}, {64, 4096}, {32, 1024}, {16, 512}, {8, 256}, {4, 128}, {2, 64}, {1, 48}, {0, 32}}

// decodeJSON decodes b keeping numbers as they were written.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

// trimToFit trims v until its JSON is estimated at most budget tokens,
// with markers in arrays or not; ok is false if even the tightest step is
// over.
func trimToFit(v any, budget int, markers bool) (out []byte, cut jsonCut, ok bool) {
	try := func(k, l int) ([]byte, jsonCut, bool) {
		var c jsonCut
		b, err := json.Marshal(trim(v, k, l, markers, &c))
		return b, c, err == nil && Tokens(string(b)) <= budget
	}
	// The loosest step that fits. Each step cuts more than the one before
	// it, so the steps that fit are the last ones: a binary search finds
	// the first in four tries, rather than trying the loose ones, which
	// cost the most (each is a near copy of the whole value), one by one.
	i, hi := 0, len(ladder)
	for i < hi {
		mid := (i + hi) / 2
		if b, c, fits := try(ladder[mid][0], ladder[mid][1]); fits {
			hi, out, cut, ok = mid, b, c, true
		} else {
			i = mid + 1
		}
	}
	if !ok || i == 0 {
		return out, cut, ok
	}
	// Between this step's item limit and the looser one before it,
	// the most items that fit.
	lo, hi := ladder[i][0], ladder[i-1][0]
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if b, c, fits := try(mid, ladder[i][1]); fits {
			lo, out, cut = mid, b, c
		} else {
			hi = mid
		}
	}
	return out, cut, true
}

// trim is v with arrays longer than k and strings longer than l bytes cut
// in the middle, counted in cut.
func trim(v any, k, l int, markers bool, cut *jsonCut) any {
	switch v := v.(type) {
	case string:
		return trimString(v, l, cut)
	case []any:
		n := len(v)
		if n <= k {
			out := make([]any, n)
			for i, x := range v {
				out[i] = trim(x, k, l, markers, cut)
			}
			return out
		}
		tail := k / 3
		head := k - tail
		out := make([]any, 0, k+1)
		for _, x := range v[:head] {
			out = append(out, trim(x, k, l, markers, cut))
		}
		if markers {
			out = append(out, fmt.Sprintf("[legate: %s items cut here]", num(n-k)))
		}
		for _, x := range v[n-tail:] {
			out = append(out, trim(x, k, l, markers, cut))
		}
		cut.Arrays++
		cut.Items += n - k
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for key, x := range v {
			out[key] = trim(x, k, l, markers, cut)
		}
		return out
	}
	return v
}

// trimString is s cut to about l bytes, its middle replaced by a note.
func trimString(s string, l int, cut *jsonCut) string {
	if len(s) <= l {
		return s
	}
	head := runeStart(s, l*2/3)
	tail := runeStart(s, len(s)-l/3)
	cut.Strings++
	cut.Bytes += tail - head
	return s[:head] + fmt.Sprintf("…[legate: %s bytes cut]…", num(tail-head)) + s[tail:]
}

// runeStart is the start of the character at or before byte i of s.
func runeStart(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}
