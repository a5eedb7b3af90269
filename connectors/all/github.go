package all

import _ "github.com/legate-mcp/legate/connectors/github" // type "github"
