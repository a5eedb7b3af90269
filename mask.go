package legate

import (
	"bytes"
	"slices"
	"unsafe"
)

// Redacted stands in for a secret a provider echoed back.
const Redacted = "[redacted]"

// minMasked is the shortest value masked: shorter ones would mangle
// ordinary text without protecting much.
const minMasked = 4

// Secrets is a set of secret values to keep out of what a provider
// returns, in every form a provider may echo one back: as it is,
// JSON-escaped, URL-encoded, hex- or base64-encoded (forms.go). The forms
// are derived once, when the set is built; masking then only searches. A
// nil *Secrets masks nothing.
type Secrets struct {
	forms [][]byte // longest first, so a form holding another goes whole
	heads heads    // finds them in one pass
}

// NewSecrets returns the set of values and of their forms. Values shorter
// than four bytes are left out: masking them would mangle ordinary text.
func NewSecrets(values ...string) *Secrets {
	seen := map[string]bool{}
	var forms [][]byte
	for _, v := range values {
		if len(v) < minMasked {
			continue
		}
		for _, f := range variants(v) {
			if len(f) >= minMasked && !seen[f] {
				seen[f] = true
				forms = append(forms, []byte(f))
			}
		}
	}
	if len(forms) == 0 {
		return nil
	}
	slices.SortStableFunc(forms, func(a, b []byte) int { return len(b) - len(a) })
	return &Secrets{forms: forms, heads: newHeads(forms)}
}

// Empty reports whether the set masks nothing.
func (s *Secrets) Empty() bool { return s == nil || len(s.forms) == 0 }

// Mask returns b with every form of every secret in it replaced by
// Redacted; b itself is changed only if it holds one. With truncated (b
// was cut at a size limit), the start of a form left at the very end by
// the cut is replaced too. A connector passes everything a provider
// returns through Mask before it reaches a result or an error.
func (s *Secrets) Mask(b []byte, truncated bool) []byte {
	if s.Empty() {
		return b
	}
	b = s.replace(b)
	if truncated {
		b = s.replace(s.maskCut(b))
	}
	return b
}

// maxRounds bounds the passes of replace. A second pass is needed only
// when a replacement joined its neighbours into another form; more than a
// few only for values made to collide with Redacted.
const maxRounds = 4

// replace replaces every form in b, again until none is left. Should
// forms still remain after maxRounds, all of b is withheld.
func (s *Secrets) replace(b []byte) []byte {
	if !s.Contains(b) {
		return b // nearly every text: one pass over it
	}
	for range maxRounds {
		found := false
		for _, f := range s.forms {
			if bytes.Contains(b, f) {
				b, found = bytes.ReplaceAll(b, f, []byte(Redacted)), true
			}
		}
		if !found {
			return b
		}
	}
	if s.Contains(b) {
		return []byte(Redacted)
	}
	return b
}

// maskCut replaces the longest start of a form that ends b.
func (s *Secrets) maskCut(b []byte) []byte {
	if k := s.cut(b, minMasked); k > 0 {
		return append(b[:len(b)-k:len(b)-k], Redacted...)
	}
	return b
}

// Partial returns the length of the longest end of b that is the start of
// a form: a stream masked as it is read holds those bytes back until the
// next read tells whether the form is complete.
func (s *Secrets) Partial(b []byte) int {
	if s.Empty() {
		return 0
	}
	return s.cut(b, 1)
}

// cut returns the length, at least least, of the longest end of b that is
// a proper start of a form; 0 if there is none.
func (s *Secrets) cut(b []byte, least int) int {
	if len(b) == 0 {
		return 0
	}
	last, n := b[len(b)-1], least-1
	for _, f := range s.forms {
		for k := min(len(f)-1, len(b)); k > n; k-- {
			if f[k-1] == last && bytes.HasSuffix(b, f[:k]) {
				n = k
				break
			}
		}
	}
	if n < least {
		return 0
	}
	return n
}

// MaskString is Mask for a text that was not truncated.
func (s *Secrets) MaskString(v string) string {
	// Read in place: Contains only reads, and a copy of every text a
	// result holds would cost more than the search.
	if !s.Contains(unsafe.Slice(unsafe.StringData(v), len(v))) {
		return v
	}
	return string(s.Mask([]byte(v), false))
}

// Contains reports whether b holds any form Mask would replace.
func (s *Secrets) Contains(b []byte) bool {
	return !s.Empty() && s.heads.contains(b, s.forms)
}

// Mask returns b with every form of the secrets in it replaced by
// Redacted, as NewSecrets(secrets...).Mask(b, truncated) does. A caller
// that masks more than once builds the set once instead.
func Mask(b []byte, truncated bool, secrets ...string) []byte {
	return NewSecrets(secrets...).Mask(b, truncated)
}

// Contains reports whether b holds any form of the secrets.
func Contains(b []byte, secrets ...string) bool {
	return NewSecrets(secrets...).Contains(b)
}
