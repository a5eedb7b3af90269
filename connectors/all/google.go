package all

import _ "github.com/legate-mcp/legate/connectors/google" // type "google"
