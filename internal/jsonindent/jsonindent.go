// Package jsonindent indents JSON for people to read — a cut result's
// pages, the panel's and the admin API's views of arguments and tool
// definitions — without letting the JSON choose the cost. Each line of
// indented JSON starts with two spaces per level it is nested, so the
// indented text grows with the square of the nesting: 8 KB of nested
// brackets indents to 32 MB. JSON that would grow past a bound is left as
// it was written.
package jsonindent

import (
	"bytes"
	"encoding/json"
)

// Indent is b, a JSON object or array, indented by two spaces a level;
// ok is false, and b is returned as it is, when b is not one valid JSON
// object or array, or when indenting it could make it more than four
// times as long (and 1 MiB).
func Indent(b []byte) (out []byte, ok bool) {
	s := bytes.TrimSpace(b)
	if len(s) == 0 || s[0] != '{' && s[0] != '[' || !json.Valid(s) || Size(s) > 4*len(s)+1<<20 {
		return b, false
	}
	var buf bytes.Buffer
	buf.Grow(Size(s))
	if json.Indent(&buf, s, "", "  ") != nil {
		return b, false
	}
	return buf.Bytes(), true
}

// Marshal is v's JSON, indented when Indent allows it, else compact.
func Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out, _ := Indent(b)
	return out, nil
}

// Size is at most how long b, valid JSON, is once indented by two spaces
// a level: each bracket and comma may start a new line, indented by its
// depth, and each colon gains a space. It is exact for compact JSON
// holding no empty object or array.
func Size(b []byte) int {
	n, depth, inString, escaped := len(b), 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			n += 1 + 2*depth
		case c == '}' || c == ']':
			depth--
			n += 1 + 2*depth
		case c == ',':
			n += 1 + 2*depth
		case c == ':':
			n++
		}
	}
	return n
}
