package mysql_test

import (
	"testing"

	"github.com/legate-mcp/legate/connectors/sqlbase/sqltest"
)

// BenchmarkQuery100 is the connector's own cost of a query of 100 rows,
// the gateway left out.
func BenchmarkQuery100(b *testing.B) {
	f := setup(b)
	c := f.connector(b, "", "")
	args := `{"sql": "SELECT id, v, id * 1.5 AS n, NOW() AS ts FROM legate_canary ORDER BY id LIMIT 100"}`
	for b.Loop() {
		if _, err := sqltest.Call(b, c, "query", args, ""); err != nil {
			b.Fatal(err)
		}
	}
}
