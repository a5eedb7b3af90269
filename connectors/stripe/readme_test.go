package stripe_test

import (
	"flag"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/connectors/connectortest"
)

var update = flag.Bool("update", false, "rewrite the generated parts of README.md")

// The README's config table is the spec's (go test -update rewrites it),
// it names every credential, and the sample config builds.
func TestReadme(t *testing.T) { connectortest.Readme(t, "stripe", *update) }

func yamlNode(t *testing.T, cfg string) *yaml.Node {
	t.Helper()
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(cfg), &node); err != nil {
		t.Fatal(err)
	}
	return &node
}
