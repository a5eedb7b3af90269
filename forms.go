package legate

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// variants returns v and the forms in which a provider may echo it: a
// JSON string's contents as common encoders write them, URL-encoded for a
// query or a path, hex, and base64 in the standard and URL alphabets at
// each of the three alignments it can have inside a longer encoding.
//
// Each form is also given as it shows inside a JSON string, escaped once
// more: an upstream's result is JSON whose text may itself be JSON.
func variants(v string) []string {
	out := []string{v, hex.EncodeToString([]byte(v)), strings.ToUpper(hex.EncodeToString([]byte(v)))}
	out = append(out, jsonForms(v)...)
	out = append(out, urlForms(v)...)
	out = append(out, base64Forms(v)...)
	for _, f := range out {
		if strings.ContainsAny(f, `\"<>&`) || !utf8.ValidString(f) {
			out = append(out, goJSON(f, true), goJSON(f, false))
		}
	}
	return out
}

// goJSON is s inside a JSON string as Go writes it.
func goJSON(s string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	enc.Encode(s)
	q := strings.TrimSuffix(b.String(), "\n")
	return q[1 : len(q)-1]
}

// jsonForms are v inside a JSON string: as Go writes it (with and without
// HTML escaping), with "/" as "\/" (PHP), with non-ASCII as \uXXXX
// (Python, PHP), and with every character but letters and digits as
// \uXXXX.
func jsonForms(v string) []string {
	var out []string
	for _, html := range []bool{true, false} {
		q := goJSON(v, html)
		out = append(out, q, strings.ReplaceAll(q, "/", `\/`))
	}
	nonASCII := uEscape(v, lowerDigits, func(r rune) bool { return r >= utf8.RuneSelf })
	out = append(out, nonASCII, strings.ReplaceAll(nonASCII, "/", `\/`),
		strings.ReplaceAll(uEscape(v, upperDigits, func(r rune) bool { return r >= utf8.RuneSelf }), "/", `\/`))
	notAlnum := func(r rune) bool { return !isAlnum(r) }
	return append(out, uEscape(v, lowerDigits, notAlnum), uEscape(v, upperDigits, notAlnum))
}

// uEscape writes v as JSON string contents, the runes for which escape
// reports true as \uXXXX (surrogate pairs beyond the BMP) with the hex
// digits of digits, the others as JSON requires.
func uEscape(v, digits string, escape func(rune) bool) string {
	var b strings.Builder
	u := func(r rune) {
		b.WriteString(`\u`)
		for shift := 12; shift >= 0; shift -= 4 {
			b.WriteByte(digits[r>>shift&0xf])
		}
	}
	for _, r := range v {
		switch {
		case escape(r) || r < ' ':
			if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
				u(r1)
				u(r2)
			} else {
				u(r)
			}
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// The hex digits of uEscape.
const (
	lowerDigits = "0123456789abcdef"
	upperDigits = "0123456789ABCDEF"
)

func isAlnum(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}

// urlForms are v percent-encoded: as a query value, as a path segment, and
// with every byte but the unreserved ones escaped, in upper- and
// lower-case hex.
func urlForms(v string) []string {
	strict := func(format string) string {
		var b strings.Builder
		for i := 0; i < len(v); i++ {
			if c := v[i]; isAlnum(rune(c)) || strings.IndexByte("-._~", c) >= 0 {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, format, c)
			}
		}
		return b.String()
	}
	q := url.QueryEscape(v)
	return []string{q, lowerEscapes(q), url.PathEscape(v), lowerEscapes(url.PathEscape(v)), strict("%%%02X"), strict("%%%02x")}
}

// lowerEscapes writes the hex digits of s's percent-escapes in lower case.
func lowerEscapes(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerHex(b[i+1]), lowerHex(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func lowerHex(c byte) byte {
	if 'A' <= c && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// minBase64 is the shortest base64 run masked for a value encoded inside
// a longer text: eight characters, six bytes of the value.
const minBase64 = 8

// base64Forms are v base64-encoded in the standard and URL alphabets:
// alone (padded and not), and inside a longer encoding, where v starts at
// an offset of 0, 1 or 2 bytes into a 3-byte group. There, only the
// groups made of v's bytes alone are v's: the characters before and after
// them depend on the neighbours.
func base64Forms(v string) []string {
	var out []string
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		out = append(out, enc.EncodeToString([]byte(v)))
		raw := enc.WithPadding(base64.NoPadding)
		for off := range 3 {
			n := off + len(v)
			s := raw.EncodeToString(append(make([]byte, off, n), v...))
			start := 0
			if off > 0 {
				start = 4
			}
			if end := 4 * (n / 3); end-start >= minBase64 {
				out = append(out, s[start:end])
			}
			if off == 0 {
				out = append(out, s)
			}
		}
	}
	return out
}

// CredentialParts returns the parts of a credential sent as an HTTP header
// value that are secret on their own, to be masked wherever they appear:
// the value; after an auth scheme, the token ("Bearer X" gives X); for
// Basic, the decoded user:password and each of its halves (the user of a
// Basic credential is often an API key itself).
func CredentialParts(value string) []string {
	out := []string{value}
	scheme, token, ok := strings.Cut(strings.TrimSpace(value), " ")
	token = strings.TrimSpace(token)
	if !ok || token == "" || !isScheme(scheme) {
		return out
	}
	out = append(out, token)
	if !strings.EqualFold(scheme, "Basic") {
		return out
	}
	dec, err := base64.StdEncoding.DecodeString(token)
	if err != nil {
		return out
	}
	user, pass, _ := strings.Cut(string(dec), ":")
	return append(out, string(dec), user, pass)
}

// isScheme reports whether s can be an HTTP auth scheme (an RFC 9110
// token).
func isScheme(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(rune(c)) && strings.IndexByte("!#$%&'*+-.^_`|~", c) < 0 {
			return false
		}
	}
	return true
}
