package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/sqlbase"
)

type describeArgs struct {
	Table  string `json:"table" jsonschema:"Table or view name as stored (unquoted names are lower case)"`
	Schema string `json:"schema,omitempty" jsonschema:"Its schema, one of the instance's; default: the first of them that has it"`
}

// describeSQL reads a table and all it is described by in one statement,
// one snapshot. A table the role may read no column of is not found.
const describeSQL = `
SELECT n.nspname, c.relname, c.relkind::text,
  CASE WHEN c.relkind IN ('r', 'm', 'p', 'f') AND c.reltuples >= 0 THEN c.reltuples::bigint END,
  (SELECT coalesce(json_agg(json_build_object('name', a.attname, 'type', format_type(a.atttypid, a.atttypmod),
      'nullable', NOT a.attnotnull, 'default', pg_get_expr(d.adbin, d.adrelid)) ORDER BY a.attnum), '[]')
    FROM pg_catalog.pg_attribute a LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
  (SELECT coalesce(json_agg(json_build_object('name', k.conname, 'type', k.contype,
      'columns', (SELECT array_agg(a.attname ORDER BY u.i) FROM unnest(k.conkey) WITH ORDINALITY u(n, i)
                  JOIN pg_catalog.pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n),
      'ref_schema', rn.nspname, 'ref_table', rc.relname,
      'ref_columns', (SELECT array_agg(a.attname ORDER BY u.i) FROM unnest(k.confkey) WITH ORDINALITY u(n, i)
                      JOIN pg_catalog.pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n),
      'on_update', k.confupdtype, 'on_delete', k.confdeltype,
      'definition', CASE WHEN k.contype = 'c' THEN pg_get_constraintdef(k.oid, true) END) ORDER BY k.conname), '[]')
    FROM pg_catalog.pg_constraint k
    LEFT JOIN pg_catalog.pg_class rc ON rc.oid = k.confrelid
    LEFT JOIN pg_catalog.pg_namespace rn ON rn.oid = rc.relnamespace
    WHERE k.conrelid = c.oid AND k.contype IN ('p', 'f', 'u', 'c')),
  (SELECT coalesce(json_agg(json_build_object('name', ic.relname, 'unique', i.indisunique, 'primary', i.indisprimary,
      'method', am.amname,
      'columns', (SELECT array_agg(pg_get_indexdef(i.indexrelid, k, true) ORDER BY k) FROM generate_series(1, i.indnkeyatts) k))
      ORDER BY ic.relname), '[]')
    FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
    JOIN pg_catalog.pg_am am ON am.oid = ic.relam
    WHERE i.indrelid = c.oid)
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname = $1 AND n.nspname = ANY($2::text[]) AND c.relkind IN ('r', 'v', 'm', 'f', 'p')
  AND has_any_column_privilege(c.oid, 'SELECT')
ORDER BY array_position($2::text[], n.nspname::text)
LIMIT 1`

var kinds = map[string]string{"r": "table", "v": "view", "m": "materialized view", "f": "foreign table", "p": "partitioned table"}

var actions = map[string]string{"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}

func (t *tools) describe(ctx context.Context, call *connectors.Call, in *describeArgs) (*legate.Result, error) {
	if in.Table == "" || len(in.Table) > 128 {
		return nil, invalid("table must be 1 to 128 characters")
	}
	schemas, err := t.inSchemas(in.Schema)
	if err != nil {
		return nil, err
	}
	rows, err := t.read(ctx, call, describeSQL, in.Table, schemas)
	if err != nil {
		return nil, err
	}
	if len(rows.Values) == 0 {
		return nil, legate.Errorf(legate.CodeNotFound, "postgres: no table or view %q that the role may read in schema %s: "+
			"the schema tool lists those there are", in.Table, strings.Join(schemas, ", "))
	}
	r := rows.Values[0]
	d := &sqlbase.TableDescription{Schema: str(r[0]), Name: str(r[1]), Kind: kinds[str(r[2])], PrimaryKey: []string{},
		ForeignKeys: []sqlbase.ForeignKey{}, Indexes: []sqlbase.Index{}, Checks: []sqlbase.Constraint{}, Uniques: []sqlbase.Constraint{}}
	if r[3] != nil {
		n := integer(r[3])
		d.RowEstimate = &n
	}
	var cons []struct {
		Name, Type, Definition string
		RefSchema              string   `json:"ref_schema"`
		RefTable               string   `json:"ref_table"`
		OnUpdate               string   `json:"on_update"`
		OnDelete               string   `json:"on_delete"`
		Columns                []string `json:"columns"`
		RefColumns             []string `json:"ref_columns"`
	}
	if err := remarshal(r[4], &d.Columns); err != nil {
		return nil, mapping(err)
	}
	if err := remarshal(r[5], &cons); err != nil {
		return nil, mapping(err)
	}
	if err := remarshal(r[6], &d.Indexes); err != nil {
		return nil, mapping(err)
	}
	for _, k := range cons {
		switch k.Type {
		case "p":
			d.PrimaryKey = k.Columns
		case "u":
			d.Uniques = append(d.Uniques, sqlbase.Constraint{Name: k.Name, Columns: k.Columns})
		case "c":
			d.Checks = append(d.Checks, sqlbase.Constraint{Name: k.Name, Columns: k.Columns, Definition: k.Definition})
		case "f":
			d.ForeignKeys = append(d.ForeignKeys, sqlbase.ForeignKey{Name: k.Name, Columns: k.Columns, RefSchema: k.RefSchema,
				RefTable: k.RefTable, RefColumns: k.RefColumns, OnUpdate: actions[k.OnUpdate], OnDelete: actions[k.OnDelete]})
		}
	}
	return &legate.Result{Structured: d}, nil
}

func mapping(err error) error {
	return legate.Errorf(legate.CodeAdapterMapping, "postgres: reading the catalog: %v", err)
}

type sampleArgs struct {
	Table  string `json:"table" jsonschema:"Table or view name as stored (unquoted names are lower case)"`
	Schema string `json:"schema,omitempty" jsonschema:"Its schema, one of the instance's; default: the search path of the instance's schemas"`
	Limit  int    `json:"limit,omitempty" jsonschema:"Rows, 1 to the instance's max_rows (default 10)"`
}

// sample reads the first rows of a table: SELECT * FROM it with a LIMIT,
// through the guard as a query would be.
func (t *tools) sample(ctx context.Context, call *connectors.Call, in *sampleArgs) (*legate.Result, error) {
	if in.Table == "" || len(in.Table) > 128 {
		return nil, invalid("table must be 1 to 128 characters")
	}
	limit := in.Limit
	switch {
	case limit == 0:
		limit = min(10, t.o.MaxRows)
	case limit < 0 || limit > t.o.MaxRows:
		return nil, invalid("limit must be between 1 and %d, got %d", t.o.MaxRows, limit)
	}
	if _, err := t.inSchemas(in.Schema); err != nil {
		return nil, err
	}
	name := pgx.Identifier{in.Table}
	if in.Schema != "" {
		name = pgx.Identifier{in.Schema, in.Table}
	}
	stmt, err := sqlbase.CheckReadAllowing(sqlbase.Postgres, fmt.Sprintf("SELECT * FROM %s LIMIT %d", name.Sanitize(), limit+1),
		t.o.AllowFunctions)
	if err != nil {
		return nil, prefix(err)
	}
	rows, err := t.b.Read(ctx, call.Credentials, &sqlbase.ReadRequest{SQL: stmt.Text, Max: limit + 1, Timeout: t.o.Timeout,
		Schemas: t.o.Schemas})
	if err != nil {
		return nil, err
	}
	return &legate.Result{Structured: page(rows, limit, t.o.MaxResultBytes)}, nil
}

// page is the query result of rows cut to limit rows and to maxBytes of
// their JSON.
func page(rows *sqlbase.Rows, limit, maxBytes int) *sqlbase.QueryResult {
	res := &sqlbase.QueryResult{Columns: rows.Columns, Rows: [][]any{}}
	size := 0
	for i, row := range rows.Values {
		b, _ := json.Marshal(row)
		size += len(b)
		if i == limit || maxBytes > 0 && size > maxBytes && i > 0 {
			res.Truncated = true
			break
		}
		res.Rows = append(res.Rows, row)
	}
	res.RowCount = len(res.Rows)
	return res
}

// prefix names the connector in a guard refusal.
func prefix(err error) error {
	if le, ok := err.(*legate.Error); ok {
		return &legate.Error{Code: le.Code, Message: "postgres: " + le.Message, Err: err}
	}
	return err
}
