package postgres

import "github.com/legate-mcp/legate/store/postgres/pgconv"

// execer is the pool or a transaction.
type execer = pgconv.Execer

var (
	duplicate = pgconv.Duplicate
	unixOr    = pgconv.UnixOr
	milliOr   = pgconv.MilliOr
	jsonOr    = pgconv.JSONOr
)
