package all

import _ "github.com/legate-mcp/legate/connectors/mysql" // type "mysql"
