package all

import _ "github.com/legate-mcp/legate/connectors/stripe" // type "stripe"
