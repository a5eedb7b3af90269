package audit

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxName bounds a caller-supplied tool name in the audit, in bytes.
const MaxName = 128

// BoundName is name cut to MaxName bytes, with every character
// that is not printable (controls, bidi overrides, bad UTF-8) as "?".
func BoundName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, name)
	if len(name) <= MaxName {
		return name
	}
	cut := MaxName - len("…")
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut] + "…"
}
