package all_test

import (
	"regexp"
	"testing"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
)

// Every connector type says its adapter version, a semver, so that
// `legate connector show` and the panel show it for every instance.
func TestEveryTypeDescribesItself(t *testing.T) {
	semver := regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
	connectortest.Samples(t, "..", func(ct connectors.Type, c connectors.Connector) {
		d, ok := c.(connectors.Describer)
		switch {
		case !ok:
			t.Errorf("%s does not implement connectors.Describer", ct.Name)
		case !semver.MatchString(d.Describe().AdapterVersion):
			t.Errorf("%s: adapter version %q is not MAJOR.MINOR.PATCH", ct.Name, d.Describe().AdapterVersion)
		}
	})
}
