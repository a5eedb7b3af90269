package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
)

// The fast path must give what decoding and encoding again gives; it is
// taken for the compact, sorted arguments clients send, and not for
// anything encoding/json would write otherwise.
func TestArgsHashCanonical(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `null`, `true`, `false`, `0`, `-1.5e+3`, `"x"`,
		`{"issue":"acme/api#1"}`,
		`{"a":1,"b":[1,"two",null,{"c":false}],"c":{"d":-0.25,"e":{}}}`,
		`{"":1,"a":2}`,
	} {
		if !canonical([]byte(in)) {
			t.Errorf("%s: not taken as canonical", in)
		}
		if got := string(canonicalize([]byte(in))); got != in {
			t.Errorf("%s: encoding/json writes %s", in, got)
		}
	}
	for _, in := range []string{
		``, ` {}`, `{} `, `{"b":1,"a":2}`, `{"a":1,"a":2}`, `{"a": 1}`, `{"a":"<b>"}`, `{"a":"x&y"}`,
		`{"a":"\n"}`, `{"a":"\u00e9"}`, `{"a":"é"}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`,
		`{"a":tru}`, `{"a":1}{"b":2}`, `{"a":1,}`, `[1,]`, `{"a"}`, `"x`, `-`, `{"a":1.0E+2}x`,
	} {
		if canonical([]byte(in)) {
			t.Errorf("%s: taken as canonical", in)
		}
	}
	if ArgsHash(nil) != ArgsHash(json.RawMessage(`{}`)) || ArgsHash(json.RawMessage(`{"b":1,"a":2}`)) != ArgsHash(json.RawMessage(`{"a":2,"b":1}`)) {
		t.Error("equal arguments hash differently")
	}
}

// FuzzArgsHash: whatever the fast path takes as canonical, encoding/json
// gives back unchanged, so the hash is the one the slow path gives.
func FuzzArgsHash(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true,null]}`, `{"b":"x","a":"y"}`, `[1.5e3,-0,"<"]`, `{"a":{"b":{"c":[]}}}`, `"\u2028"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !canonical(b) {
			return
		}
		if got := canonicalize(b); string(got) != string(b) {
			t.Fatalf("%q taken as canonical; encoding/json writes %q", b, got)
		}
		slow := sha256.Sum256(canonicalize(b))
		if ArgsHash(b) != hex.EncodeToString(slow[:]) {
			t.Fatalf("%q: the hashes differ", b)
		}
	})
}

func BenchmarkArgsHash(b *testing.B) {
	for name, args := range map[string]string{
		"canonical": `{"issue":"acme/api#12","repo":"acme/api"}`,
		"unsorted":  `{"repo":"acme/api","issue":"acme/api#12"}`,
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ArgsHash(json.RawMessage(args))
			}
		})
	}
}
