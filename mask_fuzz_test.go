package legate_test

import (
	"bytes"
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
