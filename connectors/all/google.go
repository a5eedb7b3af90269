//go:build !custom || connector_google

package all

import _ "github.com/legate-mcp/legate/connectors/google" // type "google"
