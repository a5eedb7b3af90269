package all

import _ "github.com/legate-mcp/legate/store/postgres" // schemes "postgres" and "postgresql", for replicas sharing one database
