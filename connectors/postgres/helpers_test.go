package postgres_test

import (
	"errors"

	"github.com/legate-mcp/legate/connectors/sqlbase"
)

const sqlbaseDialect = sqlbase.Postgres

func checkRead(sql string) (*sqlbase.Statement, error) { return sqlbase.CheckRead(sqlbaseDialect, sql) }

func errorsAs(err error, target any) bool { return errors.As(err, target) }
