package inspect

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/sqlbase"
)

type explainArgs struct {
	SQL     string `json:"sql" jsonschema:"One SELECT or WITH … SELECT statement, as query accepts it; parameters ? given in params"`
	Params  []any  `json:"params,omitempty" jsonschema:"Values bound to the statement's parameters, in order"`
	Format  string `json:"format,omitempty" jsonschema:"json (default) or text"`
	Analyze bool   `json:"analyze,omitempty" jsonschema:"Run the statement (MariaDB ANALYZE, MySQL EXPLAIN ANALYZE, in a READ ONLY transaction) and report actual times and rows; only when the instance sets allow_explain_analyze"`
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
		return nil, legate.Errorf(legate.CodePermissionDenied, "mysql: explain with analyze runs the statement, which this "+
			"instance does not allow: the operator sets allow_explain_analyze: true to permit it, or call explain without analyze")
	}
	stmt, err := sqlbase.CheckReadAllowing(sqlbase.MySQL, in.SQL, t.o.AllowFunctions)
	if err != nil {
		return nil, prefix(err)
	}
	args, err := sqlbase.BindParams(sqlbase.MySQL, call.Args)
	if err != nil {
		return nil, invalid("%v", err)
	}
	maria, err := t.mariaDB(ctx, call)
	if err != nil {
		return nil, err
	}
	// MySQL's EXPLAIN ANALYZE gives its tree as text only before 8.3.
	verb := "EXPLAIN"
	switch {
	case in.Analyze && maria:
		verb = "ANALYZE"
	case in.Analyze:
		verb, format = "EXPLAIN ANALYZE", "text"
	}
	if format == "json" {
		verb += " FORMAT=JSON"
	}
	rows, err := t.b.Read(ctx, call.Credentials, &sqlbase.ReadRequest{SQL: verb + " " + stmt.Text, Args: args, Max: 10000,
		Timeout: t.o.Timeout})
	if err != nil {
		return nil, err
	}
	res := &sqlbase.ExplainResult{Format: format, Analyzed: in.Analyze}
	switch {
	case format == "json":
		if len(rows.Values) != 1 || len(rows.Values[0]) != 1 {
			return nil, legate.Errorf(legate.CodeAdapterMapping, "mysql: EXPLAIN gave %d rows, not one plan", len(rows.Values))
		}
		var plan any
		if err := json.Unmarshal([]byte(str(rows.Values[0][0])), &plan); err != nil {
			return nil, legate.Errorf(legate.CodeAdapterMapping, "mysql: the JSON plan does not parse: %v", err)
		}
		res.Plan = plan
	case len(rows.Columns) == 1:
		// MySQL's EXPLAIN ANALYZE: one text column holding the tree.
		var lines []string
		for _, r := range rows.Values {
			lines = append(lines, strings.Split(str(r[0]), "\n")...)
		}
		res.Plan = lines
	default:
		// The tabular EXPLAIN: a row per table, as objects.
		list := []map[string]any{}
		for _, r := range rows.Values {
			m := map[string]any{}
			for i, c := range rows.Columns {
				m[c.Name] = r[i]
			}
			list = append(list, m)
		}
		res.Plan = list
	}
	return &legate.Result{Structured: res}, nil
}

type topArgs struct {
	OrderBy string `json:"order_by,omitempty" jsonschema:"total_time (default), mean_time or calls"`
	Limit   int    `json:"limit,omitempty" jsonschema:"Statements, 1 to 100 (default 10)"`
}

var orders = map[string]string{"total_time": "SUM_TIMER_WAIT", "mean_time": "AVG_TIMER_WAIT", "calls": "COUNT_STAR"}

// topQueries reads performance_schema's statement digests: timers are in
// picoseconds.
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
	on, err := t.read(ctx, call, "SELECT @@performance_schema")
	if err != nil {
		return nil, err
	}
	if integer(on.Values[0][0]) != 1 {
		return nil, legate.Errorf(legate.CodeNotFound, "mysql: top_queries reads performance_schema, which is off on this "+
			"server: set performance_schema=ON in the server's configuration and restart it")
	}
	rows, err := t.read(ctx, call, `SELECT COALESCE(SCHEMA_NAME, ''), COALESCE(DIGEST_TEXT, ''), COUNT_STAR,
		SUM_TIMER_WAIT / 1000000000, AVG_TIMER_WAIT / 1000000000, SUM_ROWS_SENT + SUM_ROWS_AFFECTED
		FROM performance_schema.events_statements_summary_by_digest ORDER BY `+col+` DESC LIMIT ?`, limit)
	if err != nil {
		var le *legate.Error
		if le, _ = err.(*legate.Error); le != nil && le.Code == legate.CodePermissionDenied {
			return nil, legate.Errorf(legate.CodePermissionDenied, "mysql: top_queries reads "+
				"performance_schema.events_statements_summary_by_digest, which the user may not: GRANT SELECT ON performance_schema.* TO it")
		}
		return nil, err
	}
	res := &sqlbase.TopQueriesResult{Source: "performance_schema.events_statements_summary_by_digest", OrderBy: order,
		Queries: []sqlbase.TopQuery{}}
	for _, r := range rows.Values {
		res.Queries = append(res.Queries, sqlbase.TopQuery{Schema: str(r[0]), Query: str(r[1]), Calls: integer(r[2]),
			TotalMillis: num(r[3]), MeanMillis: num(r[4]), Rows: integer(r[5])})
	}
	return &legate.Result{Structured: res}, nil
}
