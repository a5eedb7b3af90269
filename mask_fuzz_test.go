package legate_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
)

// FuzzMask checks the invariant of masking: whatever the text around it
// and whichever form of the secret it holds, no form of the secret is
// left after Mask (but those that Redacted itself spells).
func FuzzMask(f *testing.F) {
	f.Add(secret, "before ", " after", uint8(0), false)
	f.Add("Bearer abc/def", `{"error":"`, `"}`, uint8(5), false)
	f.Add("tok+en/==", "xy", "!", uint8(30), true)
	f.Add("dact", "[re", "ted]", uint8(0), false)
	f.Add("x[redacted]", "", "", uint8(0), false)
	f.Add("ééééé", `"`, `"`, uint8(9), true)
	f.Fuzz(func(t *testing.T, value, before, after string, which uint8, truncated bool) {
		s := legate.NewSecrets(value)
		forms := s.Forms()
		in := before + after
		if len(forms) > 0 {
			in = before + string(forms[int(which)%len(forms)]) + after
		}
		out := s.Mask([]byte(in), truncated)
		for _, form := range forms {
			if bytes.Contains(out, form) && !strings.Contains(legate.Redacted, string(form)) {
				t.Fatalf("Mask(%q) of %q = %q: form %q is left", in, value, out, form)
			}
		}
		if !s.Empty() && !s.Contains([]byte(in)) {
			t.Fatalf("Contains(%q) = false for a text holding a form of %q", in, value)
		}
	})
}

// TestContainsFindsEveryFormAnywhere checks the one-pass search against
// a search per form: a set of secrets of every length (four bytes and up,
// so both ways of searching are used), each form at each offset in a
// text, and texts near the forms that hold none.
func TestContainsFindsEveryFormAnywhere(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+/="
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = letters[r.IntN(len(letters))]
		}
		return string(b)
	}
	for _, lengths := range [][]int{{4}, {5, 40}, {7}, {8, 9, 10}, {12, 20, 36, 40, 64, 72}} {
		var values []string
		for _, n := range lengths {
			for range 3 {
				values = append(values, word(n))
			}
		}
		s := legate.NewSecrets(values...)
		oracle := func(b []byte) bool {
			for _, f := range s.Forms() {
				if bytes.Contains(b, f) {
					return true
				}
			}
			return false
		}
		for _, f := range s.Forms() {
			for off := range 24 {
				in := []byte(word(off) + string(f) + word(r.IntN(8)))
				if !s.Contains(in) {
					t.Fatalf("lengths %v: Contains misses %q at offset %d", lengths, f, off)
				}
				// Cut short by one byte at either end: found only if the
				// search per form finds something.
				for _, cut := range [][]byte{in[:off+len(f)-1], append([]byte(word(off)), f[1:]...)} {
					if got, want := s.Contains(cut), oracle(cut); got != want {
						t.Fatalf("lengths %v: Contains(%q) = %v, a search per form says %v", lengths, cut, got, want)
					}
				}
			}
		}
	}
}
