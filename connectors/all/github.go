//go:build !custom || connector_github

package all

import _ "github.com/legate-mcp/legate/connectors/github" // type "github"
