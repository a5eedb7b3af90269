package all

import _ "github.com/legate-mcp/legate/store/sqlite" // scheme "sqlite", the embedded default
