package jsonindent_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/internal/jsonindent"
)

// TestSizeBoundsIndent: Size is never below what json.Indent writes, and
// is exact for compact JSON without empty objects or arrays.
func TestSizeBoundsIndent(t *testing.T) {
	for _, c := range []struct {
		s     string
		exact bool
	}{
		{`{"a":1}`, true},
		{`[1,2,[3,[4,{"k":"v"}]]]`, true},
		{`{"s":"brackets [{,:}] and \"quotes\" and \\ in a string","n":[true,false,null]}`, true},
		{`{"empty":{},"none":[],"x":[{}]}`, false},
		{"{ \"spaced\" : [ 1 , 2 ] ,\n \"k\" : { \"j\" : \"v\" } }", false},
		{strings.Repeat("[", 50) + strings.Repeat("]", 50), false},
	} {
		var b bytes.Buffer
		if err := json.Indent(&b, []byte(c.s), "", "  "); err != nil {
			t.Fatal(err)
		}
		got := jsonindent.Size([]byte(c.s))
		if got < b.Len() || c.exact && got != b.Len() {
			t.Errorf("Size(%s) = %d, indented it is %d bytes", c.s, got, b.Len())
		}
	}
}

// TestIndent: JSON of usual depth is indented as json.Indent does; JSON
// nested thousands deep, and what is no JSON object or array, is returned
// as it is.
func TestIndent(t *testing.T) {
	flat := []byte(`[` + strings.Repeat(`{"id":1,"tags":["a","b"]},`, 400) + `{}]`)
	var want bytes.Buffer
	json.Indent(&want, flat, "", "  ")
	if got, ok := jsonindent.Indent(flat); !ok || !bytes.Equal(got, want.Bytes()) {
		t.Errorf("Indent of usual JSON: ok %v, %.80q", ok, got)
	}
	nested := strings.Repeat("[", 64) + strings.Repeat("]", 64) // 64 deep
	for name, in := range map[string]string{
		"deep":               strings.Repeat("[", 4000) + strings.Repeat("]", 4000),
		"many, each 64 deep": "[" + strings.Repeat(nested+",", 20000) + nested + "]",
		"a scalar":           `"text"`,
		"not JSON":           `{"a":`,
	} {
		if got, ok := jsonindent.Indent([]byte(in)); ok || string(got) != in {
			t.Errorf("%s: indented (ok %v, %d bytes from %d)", name, ok, len(got), len(in))
		}
	}
}

// TestMarshal: a value's JSON, indented.
func TestMarshal(t *testing.T) {
	got, err := jsonindent.Marshal(map[string]any{"a": []int{1}})
	if err != nil || string(got) != "{\n  \"a\": [\n    1\n  ]\n}" {
		t.Errorf("Marshal = %q, %v", got, err)
	}
}

// FuzzIndent: for any valid JSON, Size bounds what json.Indent writes,
// and Indent either returns that indentation or the input unchanged.
func FuzzIndent(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c\"]"}]}`, `[[],{}]`, " [ 1 , 2 ] ", `"x"`, strings.Repeat("[", 100) + strings.Repeat("]", 100)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		var want bytes.Buffer
		if err := json.Indent(&want, bytes.TrimSpace(b), "", "  "); err != nil {
			t.Fatal(err)
		}
		if n := jsonindent.Size(bytes.TrimSpace(b)); n < want.Len() {
			t.Fatalf("Size = %d, below the %d bytes indented: %q", n, want.Len(), b)
		}
		got, ok := jsonindent.Indent(b)
		if ok && !bytes.Equal(got, want.Bytes()) || !ok && !bytes.Equal(got, b) {
			t.Fatalf("Indent(%q) = %q, %v", b, got, ok)
		}
	})
}
