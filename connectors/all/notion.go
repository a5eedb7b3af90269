//go:build !custom || connector_notion

package all

import _ "github.com/legate-mcp/legate/connectors/notion" // type "notion"
