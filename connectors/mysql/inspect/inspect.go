// Package inspect holds the mysql connector's inspection tools —
// describe_table, sample_table, explain, top_queries and health — all of
// class read, for MySQL and MariaDB. Each statement they send goes
// through the connector's guarded read (sqlbase.Backend.Read): a prepared
// statement in a READ ONLY transaction with the statement timeout, on the
// instance's pool, whose user the connector has checked. The statements
// a call supplies (explain's sql) or assembles from names (sample_table)
// pass the SQL guard first, as query's do; the catalog statements are
// this package's own text, with every name bound as a parameter.
package inspect

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/sqlbase"
)

// Options configure the tools of one instance.
type Options struct {
	// Schemas are the instance's databases: describe_table and
	// sample_table look only there.
	Schemas []string
	// MaxRows bounds sample_table; MaxResultBytes bounds its rows.
	MaxRows, MaxResultBytes int
	Timeout                 time.Duration
	// AllowAnalyze lets explain run the statement (allow_explain_analyze).
	AllowAnalyze bool
	// AllowFunctions are the functions a read may call beyond the
	// built-in read-only ones.
	AllowFunctions *sqlbase.Funcs
}

type tools struct {
	b sqlbase.Backend
	o Options
}

// Tools returns describe_table, sample_table, explain, top_queries and
// health.
func Tools(b sqlbase.Backend, o Options) []connectors.Tool {
	t := &tools{b: b, o: o}
	return []connectors.Tool{
		connectors.Returning[sqlbase.TableDescription](connectors.NewTool("describe_table", "Describe one table or view: "+
			"its columns (type, nullability, default), primary key, foreign keys and what they reference, indexes (columns, "+
			"unique, method), CHECK and UNIQUE constraints, and the row estimate (TABLES.TABLE_ROWS).", legate.ClassRead, t.describe)),
		connectors.Returning[sqlbase.QueryResult](connectors.NewTool("sample_table", fmt.Sprintf("Return a few rows of one "+
			"table or view (at most %d, default 10) to see what its data looks like; read through the same guard as query.",
			o.MaxRows), legate.ClassRead, t.sample)),
		connectors.Returning[sqlbase.ExplainResult](connectors.NewTool("explain", "Show the plan the server chooses for one "+
			"SELECT (as query accepts it): EXPLAIN FORMAT=JSON, or text. analyze: true runs the statement to report actual "+
			"times and rows (MariaDB ANALYZE, MySQL EXPLAIN ANALYZE), inside a READ ONLY transaction, when the instance sets "+
			"allow_explain_analyze.", legate.ClassRead, t.explain)),
		connectors.Returning[sqlbase.TopQueriesResult](connectors.NewTool("top_queries", "List the statements that took "+
			"the most time (or calls, or mean time), from performance_schema's statement digests.", legate.ClassRead, t.topQueries)),
		connectors.Returning[sqlbase.HealthResult](connectors.NewTool("health", "Check the server's health: InnoDB buffer "+
			"pool hit rate, long-running statements, sessions waiting for row locks (and on whom), tables with the most free "+
			"space to reclaim, and replica state and lag.", legate.ClassRead, t.health)),
	}
}

// read runs one of this package's catalog statements.
func (t *tools) read(ctx context.Context, call *connectors.Call, sql string, args ...any) (*sqlbase.Rows, error) {
	return t.b.Read(ctx, call.Credentials, &sqlbase.ReadRequest{SQL: sql, Args: args, Max: 10000, Timeout: t.o.Timeout})
}

// mariaDB reports whether the server is MariaDB.
func (t *tools) mariaDB(ctx context.Context, call *connectors.Call) (bool, error) {
	rows, err := t.read(ctx, call, "SELECT VERSION()")
	if err != nil {
		return false, err
	}
	return strings.Contains(strings.ToLower(str(rows.Values[0][0])), "mariadb"), nil
}

// schemaOf is the database to look in: schema when it is one of the
// instance's, else the first of them.
func (t *tools) schemaOf(schema string) (string, error) {
	if schema == "" && len(t.o.Schemas) > 0 {
		return t.o.Schemas[0], nil
	}
	for _, s := range t.o.Schemas {
		if s == schema {
			return s, nil
		}
	}
	return "", invalid("schema %q is not one of this instance's databases (%v)", schema, t.o.Schemas)
}

func invalid(format string, args ...any) *legate.Error {
	return legate.Errorf(legate.CodeInvalidArgument, "mysql: "+format, args...)
}

// prefix names the connector in a guard refusal.
func prefix(err error) error {
	if le, ok := err.(*legate.Error); ok {
		return &legate.Error{Code: le.Code, Message: "mysql: " + le.Message, Err: err}
	}
	return err
}

// str, num and integer read a value of sqlbase.Rows.
func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

func num(v any) float64 {
	f, _ := strconv.ParseFloat(str(v), 64)
	return f
}

func integer(v any) int64 {
	if i, ok := v.(int64); ok {
		return i
	}
	return int64(num(v))
}
