package host_test

import (
	"flag"
	"testing"

	"github.com/legate-mcp/legate/connectors/connectortest"
)

var update = flag.Bool("update", false, "rewrite the generated parts of README.md")

// The README's config table is the spec's (go test -update rewrites it)
// and the sample config builds.
func TestReadme(t *testing.T) { connectortest.Readme(t, "host", *update) }
