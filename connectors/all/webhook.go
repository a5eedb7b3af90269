package all

import _ "github.com/legate-mcp/legate/connectors/webhook" // type "webhook"
