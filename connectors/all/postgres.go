//go:build !custom || connector_postgres

package all

import _ "github.com/legate-mcp/legate/connectors/postgres" // type "postgres"
