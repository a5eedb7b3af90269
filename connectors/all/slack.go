//go:build !custom || connector_slack

package all

import _ "github.com/legate-mcp/legate/connectors/slack" // type "slack"
