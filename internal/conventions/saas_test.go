package conventions_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors/connectortest"
)

// TestSaaSToolsDeclareTheirResults keeps the promise of connectors/saas:
// every tool of a connector built on it declares the output schema of its
// result (connectors.Returning), so clients see the stable model it
// returns.
func TestSaaSToolsDeclareTheirResults(t *testing.T) {
	found := 0
	for _, p := range listPackages(t) {
		rp := rel(p.ImportPath)
		if !connectorTypeDir(rp) || !slices.Contains(p.Imports, module+"/connectors/saas") {
			continue
		}
		found++
		typ := strings.TrimPrefix(rp, "connectors/")
		sample, err := os.ReadFile(filepath.Join(p.Dir, "sample.yaml"))
		if err != nil {
			t.Errorf("connectors/%s: %v", typ, err)
			continue
		}
		for _, tool := range connectortest.Build(t, typ, typ, string(sample)).Tools() {
			if tool.OutputSchema == nil {
				t.Errorf("connectors/%s: tool %s declares no output schema; wrap it in connectors.Returning", typ, tool.Name)
			}
		}
	}
	if found == 0 {
		t.Fatal("no connector is built on connectors/saas; is the test looking in the right place?")
	}
}
