package connectortest

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors"
)

// generatedConfig is the part of a connector's README that its spec writes.
var generatedConfig = regexp.MustCompile(`(?s)<!-- config: generated from the spec by go test -update -->\n.*?<!-- end config -->`)

// Readme checks the connector of type typ against the README.md and
// sample.yaml of the package under test: the README's config table is the
// spec's (with update, it is rewritten instead), the README names each
// credential, and the sample config builds an instance.
func Readme(t *testing.T, typ string, update bool) {
	t.Helper()
	ct, ok := connectors.Lookup(typ)
	if !ok {
		t.Fatalf("connector type %q is not registered", typ)
	}
	table, err := connectors.ConfigTable(ct)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := "<!-- config: generated from the spec by go test -update -->\n" + table + "<!-- end config -->"
	switch got := generatedConfig.FindString(string(b)); {
	case got == "":
		t.Errorf("README.md has no generated config table (a <!-- config: generated from the spec by go test -update --> ... <!-- end config --> block)")
	case update:
		if err := os.WriteFile("README.md", []byte(generatedConfig.ReplaceAllLiteralString(string(b), want)), 0o644); err != nil {
			t.Fatal(err)
		}
	case got != want:
		t.Errorf("README.md's config table is not the spec's; run go test -update on this package\n got:\n%s\nwant:\n%s", got, want)
	}
	for _, c := range ct.Credentials {
		if !strings.Contains(string(b), "`"+c.Name+"`") {
			t.Errorf("README.md does not name the credential %s", c.Name)
		}
	}
	sample, err := os.ReadFile("sample.yaml")
	if err != nil {
		t.Fatal(err)
	}
	Build(t, typ, typ, string(sample))
}
