//go:build !custom || connector_email

package all

import _ "github.com/legate-mcp/legate/connectors/email" // type "email"
