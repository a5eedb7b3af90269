// Package inspect holds the postgres connector's inspection tools —
// describe_table, sample_table, explain, top_queries and health — all of
// class read. Each statement they send goes through the connector's
// guarded read (sqlbase.Backend.Read): one statement over the extended
// protocol in a READ ONLY transaction with the statement timeout, on the
// instance's pool, whose role the connector has checked. The statements
// a call supplies (explain's sql) or assembles from names (sample_table)
// pass the SQL guard first, as query's do; the catalog statements are
// this package's own text, with every name bound as a parameter.
package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/sqlbase"
)

// Options configure the tools of one instance.
type Options struct {
	// Schemas are the instance's schemas: describe_table and sample_table
	// look only there.
	Schemas []string
	// DefaultRows and MaxRows bound sample_table; MaxResultBytes bounds
	// its rows as query's.
	DefaultRows, MaxRows, MaxResultBytes int
	Timeout                              time.Duration
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
			"unique, method), CHECK and UNIQUE constraints, and the planner's row estimate.", legate.ClassRead, t.describe)),
		connectors.Returning[sqlbase.QueryResult](connectors.NewTool("sample_table", fmt.Sprintf("Return a few rows of one "+
			"table or view (at most %d, default 10) to see what its data looks like; read through the same guard as query.",
			o.MaxRows), legate.ClassRead, t.sample)),
		connectors.Returning[sqlbase.ExplainResult](connectors.NewTool("explain", "Show the plan PostgreSQL chooses for one "+
			"SELECT (as query accepts it), in JSON or text. analyze: true runs the statement to report actual times and rows, "+
			"inside a READ ONLY transaction, when the instance sets allow_explain_analyze.", legate.ClassRead, t.explain)),
		connectors.Returning[sqlbase.TopQueriesResult](connectors.NewTool("top_queries", "List the statements that took "+
			"the most time (or calls, or mean time) in this database, from the pg_stat_statements extension.",
			legate.ClassRead, t.topQueries)),
		connectors.Returning[sqlbase.HealthResult](connectors.NewTool("health", "Check the database's health: cache hit "+
			"rate, long-running statements, sessions blocked by locks (and by whom), the tables an estimate finds most bloated, and "+
			"replication state and lag.", legate.ClassRead, t.health)),
	}
}

// read runs one of this package's catalog statements.
func (t *tools) read(ctx context.Context, call *connectors.Call, sql string, args ...any) (*sqlbase.Rows, error) {
	return t.b.Read(ctx, call.Credentials, &sqlbase.ReadRequest{SQL: sql, Args: args, Max: 10000, Timeout: t.o.Timeout,
		Schemas: t.o.Schemas})
}

// inSchemas checks that schema, when given, is one of the instance's,
// and returns the schemas to look in.
func (t *tools) inSchemas(schema string) ([]string, error) {
	if schema == "" {
		return t.o.Schemas, nil
	}
	for _, s := range t.o.Schemas {
		if s == schema {
			return []string{schema}, nil
		}
	}
	return nil, invalid("schema %q is not one of this instance's schemas (%v)", schema, t.o.Schemas)
}

func invalid(format string, args ...any) *legate.Error {
	return legate.Errorf(legate.CodeInvalidArgument, "postgres: "+format, args...)
}

// str, num and integer read a value of sqlbase.Rows.
func str(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
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

// remarshal decodes a JSON value of sqlbase.Rows into out.
func remarshal(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
