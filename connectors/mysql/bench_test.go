package mysql_test

import (
	"testing"

	"github.com/legate-mcp/legate/connectors/sqlbase/sqltest"
)

// BenchmarkQuery100 is the connector's own cost of a query of 100 rows,
// the gateway left out.
func BenchmarkQuery100(b *testing.B) {
	f := setup(b)
	sqltest.BenchQuery100(b, f.connector(b, "", ""))
}
