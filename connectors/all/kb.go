//go:build !custom || connector_kb

package all

import _ "github.com/legate-mcp/legate/connectors/kb" // type "kb"
