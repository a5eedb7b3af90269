//go:build !custom || connector_stripe

package all

import _ "github.com/legate-mcp/legate/connectors/stripe" // type "stripe"
