//go:build !custom || connector_webhook

package all

import _ "github.com/legate-mcp/legate/connectors/webhook" // type "webhook"
