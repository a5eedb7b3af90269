package inspect

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/sqlbase"
)

type explainArgs struct {
	SQL     string `json:"sql" jsonschema:"One SELECT or WITH … SELECT statement, as query accepts it; parameters $1, $2 … given in params"`
	Params  []any  `json:"params,omitempty" jsonschema:"Values bound to the statement's parameters, in order"`
	Format  string `json:"format,omitempty" jsonschema:"json (default) or text"`
	Analyze bool   `json:"analyze,omitempty" jsonschema:"Run the statement (EXPLAIN ANALYZE, in a READ ONLY transaction) and report actual times and rows; only when the instance sets allow_explain_analyze"`
}

// explain runs EXPLAIN of a statement the guard accepts as a read: a
// write hidden in it is refused as query refuses it, and ANALYZE, which
// runs it, does so in the READ ONLY transaction under the statement
// timeout, and only where the operator allowed it.
func (t *tools) explain(ctx context.Context, call *connectors.Call, in *explainArgs) (*legate.Result, error) {
	format := strings.ToLower(in.Format)
	if format == "" {
		format = "json"
	}
	if format != "json" && format != "text" {
		return nil, invalid("format must be json or text, not %q", in.Format)
	}
	if in.Analyze && !t.o.AllowAnalyze {
		return nil, legate.Errorf(legate.CodePermissionDenied, "postgres: explain with analyze runs the statement, which this "+
			"instance does not allow: the operator sets allow_explain_analyze: true to permit it, or call explain without analyze")
	}
	stmt, err := sqlbase.CheckReadAllowing(sqlbase.Postgres, in.SQL, t.o.AllowFunctions)
	if err != nil {
		return nil, prefix(err)
	}
	args, err := sqlbase.BindParams(sqlbase.Postgres, call.Args)
	if err != nil {
		return nil, invalid("%v", err)
	}
	opts := "FORMAT " + strings.ToUpper(format)
	if in.Analyze {
		opts = "ANALYZE, " + opts
	}
	rows, err := t.b.Read(ctx, call.Credentials, &sqlbase.ReadRequest{SQL: fmt.Sprintf("EXPLAIN (%s) %s", opts, stmt.Text),
		Args: args, Max: 10000, Timeout: t.o.Timeout, Schemas: t.o.Schemas})
	if err != nil {
		return nil, err
	}
	res := &sqlbase.ExplainResult{Format: format, Analyzed: in.Analyze}
	if format == "json" {
		if len(rows.Values) != 1 || len(rows.Values[0]) != 1 {
			return nil, legate.Errorf(legate.CodeAdapterMapping, "postgres: EXPLAIN gave %d rows, not one plan", len(rows.Values))
		}
		res.Plan = rows.Values[0][0]
	} else {
		lines := make([]string, len(rows.Values))
		for i, r := range rows.Values {
			lines[i] = str(r[0])
		}
		res.Plan = lines
	}
	return &legate.Result{Structured: res}, nil
}

type topArgs struct {
	OrderBy string `json:"order_by,omitempty" jsonschema:"total_time (default), mean_time or calls"`
	Limit   int    `json:"limit,omitempty" jsonschema:"Statements, 1 to 100 (default 10)"`
}

var orders = map[string]string{"total_time": "total_exec_time", "mean_time": "mean_exec_time", "calls": "calls"}

// topQueries reads pg_stat_statements (PostgreSQL 13 and later) for the
// current database.
func (t *tools) topQueries(ctx context.Context, call *connectors.Call, in *topArgs) (*legate.Result, error) {
	order := in.OrderBy
	if order == "" {
		order = "total_time"
	}
	col, ok := orders[order]
	if !ok {
		return nil, invalid("order_by must be total_time, mean_time or calls, not %q", in.OrderBy)
	}
	limit := in.Limit
	if limit == 0 {
		limit = 10
	}
	if limit < 1 || limit > 100 {
		return nil, invalid("limit must be between 1 and 100, got %d", limit)
	}
	ext, err := t.read(ctx, call, `SELECT n.nspname, current_database() FROM pg_catalog.pg_extension e
		JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_stat_statements'`)
	if err != nil {
		return nil, err
	}
	if len(ext.Values) == 0 {
		return nil, legate.Errorf(legate.CodeNotFound, "postgres: top_queries reads the pg_stat_statements extension, which is "+
			"not installed in this database: add pg_stat_statements to the server's shared_preload_libraries (restart), then "+
			"CREATE EXTENSION pg_stat_statements in the database")
	}
	view := pgx.Identifier{str(ext.Values[0][0]), "pg_stat_statements"}.Sanitize()
	rows, err := t.read(ctx, call, `SELECT query, calls, total_exec_time, mean_exec_time, rows FROM `+view+`
		WHERE dbid = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
		ORDER BY `+col+` DESC LIMIT $1`, limit)
	if err != nil {
		if strings.Contains(err.Error(), "shared_preload_libraries") {
			return nil, legate.Errorf(legate.CodeNotFound, "postgres: top_queries reads the pg_stat_statements extension, which "+
				"is installed but not loaded: add pg_stat_statements to the server's shared_preload_libraries and restart it")
		}
		return nil, err
	}
	res := &sqlbase.TopQueriesResult{Source: "pg_stat_statements", OrderBy: order, Queries: []sqlbase.TopQuery{}}
	for _, r := range rows.Values {
		res.Queries = append(res.Queries, sqlbase.TopQuery{Query: str(r[0]), Calls: integer(r[1]), TotalMillis: num(r[2]),
			MeanMillis: num(r[3]), Rows: integer(r[4])})
	}
	return &legate.Result{Structured: res}, nil
}
