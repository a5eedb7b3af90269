//go:build !custom || connector_host

package all

import _ "github.com/legate-mcp/legate/connectors/host" // type "host"
