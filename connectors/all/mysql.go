//go:build !custom || connector_mysql

package all

import _ "github.com/legate-mcp/legate/connectors/mysql" // type "mysql"
