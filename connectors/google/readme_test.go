package google_test

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors"
)

var update = flag.Bool("update", false, "rewrite the generated parts of README.md")

// configTable renders the config spec as the README shows it.
func configTable(t *testing.T) string {
	ct, _ := connectors.Lookup("google")
	fields, err := connectors.FieldsOf(ct.Config())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("| field | kind | default | description |\n|---|---|---|---|\n")
	for _, f := range fields {
		def := ""
		if f.Default != "" {
			def = "`" + f.Default + "`"
		}
		desc := f.Description
		if f.Example != "" {
			desc += ". Example: `" + f.Example + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Name, f.Kind, def, desc)
	}
	return b.String()
}

var generated = regexp.MustCompile(`(?s)<!-- config: generated from the spec by go test -update -->\n.*?<!-- end config -->`)

// The README's config table is the spec's; go test -update rewrites it.
func TestReadmeConfigIsTheSpec(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := "<!-- config: generated from the spec by go test -update -->\n" + configTable(t) + "<!-- end config -->"
	if *update {
		out := generated.ReplaceAllLiteralString(string(b), want)
		if err := os.WriteFile("README.md", []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := generated.FindString(string(b)); got != want {
		t.Errorf("README.md's config table is not the spec's; run go test -update ./connectors/google\n got:\n%s\nwant:\n%s", got, want)
	}
	ct, _ := connectors.Lookup("google")
	for _, c := range ct.Credentials {
		if !strings.Contains(string(b), "`"+c.Name+"`") {
			t.Errorf("README.md does not name the credential %s", c.Name)
		}
	}
}
