package all_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/connectors"
)

// Every connector type says its adapter version, a semver, so that
// `legate connector show` and the panel show it for every instance.
func TestEveryTypeDescribesItself(t *testing.T) {
	semver := regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
	for _, ct := range connectors.Types() {
		sample, err := os.ReadFile(filepath.Join("..", ct.Name, "sample.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var node yaml.Node
		if err := yaml.Unmarshal(sample, &node); err != nil {
			t.Fatal(err)
		}
		c, err := connectors.Build(ct, ct.Name, &node, ct.Name+"/sample.yaml")
		if err != nil {
			t.Fatal(err)
		}
		d, ok := c.(connectors.Describer)
		switch {
		case !ok:
			t.Errorf("%s does not implement connectors.Describer", ct.Name)
		case !semver.MatchString(d.Describe().AdapterVersion):
			t.Errorf("%s: adapter version %q is not MAJOR.MINOR.PATCH", ct.Name, d.Describe().AdapterVersion)
		}
		if cl, ok := c.(connectors.Closer); ok {
			cl.Close()
		}
	}
}
