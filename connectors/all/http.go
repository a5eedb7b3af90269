//go:build !custom || connector_http

package all

import _ "github.com/legate-mcp/legate/connectors/http" // type "http"
