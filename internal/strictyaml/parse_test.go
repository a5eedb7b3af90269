package strictyaml_test

import (
	"strings"
	"testing"

	"github.com/legate-mcp/legate/internal/strictyaml"
)

// A syntax error names the line the problem is on, not the line where
// the enclosing collection begins.
func TestParseNamesTheLine(t *testing.T) {
	for doc, want := range map[string]string{
		"connectors:\n  - id: web\n   type: http\n":                         "line 3: ",
		"listen: a\npolicy:\n  defaults: {read: allow\nupstreams: []\n":     "line 3: ",
		"a: 1\nb: 2\nc: \"open\nd: 4\n":                                     "line ",
		"name: x\n\tkey: tab\n":                                             "line 2: ",
		"connectors:\n  - id: a\n    type: http\n  - id: b\n     type: x\n": "line 5: ",
	} {
		_, err := strictyaml.Parse([]byte(doc))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v, want an error starting %q", doc, err, want)
		}
	}
	if n, err := strictyaml.Parse([]byte("a: 1\n")); err != nil || n == nil {
		t.Fatalf("a valid document: %v", err)
	}
}
