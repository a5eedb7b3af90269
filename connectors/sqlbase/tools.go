package sqlbase

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

// queryArgs are the arguments of query.
type queryArgs struct {
	SQL    string   `json:"sql" jsonschema:"One SELECT or WITH … SELECT statement. Parameters are written $1, $2 … (postgres) or ? (mysql) and given in params, never spliced into the text"`
	Params []any    `json:"params,omitempty" jsonschema:"Values bound to the statement's parameters, in order: strings, numbers, booleans, null; objects and arrays are bound as JSON text"`
	Limit  int      `json:"limit,omitempty" jsonschema:"Rows in this page, 1 to the instance's max_rows (default: its default_rows)"`
	Keyset []string `json:"keyset,omitempty" jsonschema:"Result columns, NOT NULL and unique together, that order the rows (ascending) and let next_cursor continue after the last row; without keyset a long result is cut and marked truncated"`
	Cursor string   `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page; give the same sql, params and keyset"`
}

// Column is one column of a result.
type Column struct {
	Name string `json:"name" jsonschema:"Column name as the database reports it"`
	Type string `json:"type" jsonschema:"Database type name, e.g. int4, text, timestamptz (postgres) or INT, VARCHAR, DATETIME (mysql)"`
}

// QueryResult is the structured result of query.
type QueryResult struct {
	Columns []Column `json:"columns" jsonschema:"The result's columns, in order"`
	Rows    [][]any  `json:"rows" jsonschema:"The rows, each an array in column order: numbers stay numbers, times are RFC 3339, binary is base64, NULL is null"`
	// RowCount is len(Rows).
	RowCount int `json:"row_count" jsonschema:"Rows in this page"`
	// Truncated is set when there are more rows than this page.
	Truncated  bool   `json:"truncated" jsonschema:"More rows exist than this page holds"`
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"Opaque cursor of the next page, when keyset was given and more rows exist"`
}

// executeArgs are the arguments of execute.
type executeArgs struct {
	SQL    string `json:"sql" jsonschema:"One INSERT, UPDATE, DELETE or MERGE (postgres) / REPLACE (mysql) statement. Parameters are written $1, $2 … (postgres) or ? (mysql) and given in params"`
	Params []any  `json:"params,omitempty" jsonschema:"Values bound to the statement's parameters, in order"`
}

// ExecResult is the structured result of execute.
type ExecResult struct {
	RowsAffected int64 `json:"rows_affected" jsonschema:"Rows the statement inserted, updated or deleted"`
	// LastInsertID is MySQL's AUTO_INCREMENT value of the write, when any.
	LastInsertID *int64 `json:"last_insert_id,omitempty" jsonschema:"The AUTO_INCREMENT id the write generated (mysql)"`
	OperationKey string `json:"operation_key" jsonschema:"Idempotency key of the write: a retry with it returns this outcome without writing again"`
	Replayed     bool   `json:"replayed" jsonschema:"This outcome is the recorded one of an earlier attempt with the same key; nothing was written now"`
}

// schemaArgs are the arguments of schema.
type schemaArgs struct {
	Schema string `json:"schema,omitempty" jsonschema:"Only this schema (postgres) or database (mysql), one of the instance's allowed ones"`
	Table  string `json:"table,omitempty" jsonschema:"Only tables whose name contains this text"`
}

// Table is one table or view.
type Table struct {
	Schema  string        `json:"schema"`
	Name    string        `json:"name"`
	Kind    string        `json:"kind" jsonschema:"table, view, materialized view, foreign table or partitioned table"`
	Columns []TableColumn `json:"columns"`
}

// TableColumn is one column of a table.
type TableColumn struct {
	Name     string `json:"name"`
	Type     string `json:"type" jsonschema:"Full database type, e.g. character varying(80), numeric(10,2), int(11) unsigned"`
	Nullable bool   `json:"nullable"`
}

// SchemaResult is the structured result of schema.
type SchemaResult struct {
	Tables    []Table `json:"tables"`
	Truncated bool    `json:"truncated" jsonschema:"More tables exist: narrow with schema or table"`
}

// Tools returns the instance's tools: query and schema, and execute
// unless o.ReadOnly.
func Tools(b Backend, o Options) []connectors.Tool {
	t := &tools{b: b, o: o, signer: NewSigner(o.Instance)}
	ph := map[Dialect]string{Postgres: "$1, $2 …", MySQL: "?"}[o.Dialect]
	out := []connectors.Tool{
		connectors.Returning[QueryResult](connectors.NewTool("query", fmt.Sprintf("Run one read-only SELECT (or WITH … SELECT) "+
			"and return typed rows: columns with their database types, at most %d rows per page (default %d), truncated when cut. "+
			"Bind values as parameters (%s) in params. Give keyset (ordering, unique, NOT NULL result columns) to page "+
			"through long results with next_cursor. Runs in a READ ONLY transaction with a %s statement timeout; writes, "+
			"several statements, SELECT … INTO and locking are refused.", o.MaxRows, o.DefaultRows, ph, o.Timeout),
			legate.ClassRead, t.query)),
		connectors.Returning[SchemaResult](connectors.NewTool("schema", "List the tables and views of the allowed "+
			"schemas with their columns, types and nullability, to write a query.", legate.ClassRead, t.schema)),
	}
	if !o.ReadOnly {
		execute := connectors.Returning[ExecResult](connectors.NewTool("execute", fmt.Sprintf("Run exactly one "+
			"data-modifying statement (INSERT, UPDATE, DELETE, %s) with its values bound as parameters (%s) and return the "+
			"rows affected. Idempotent: a retry of the same call returns the first outcome without writing again.",
			map[Dialect]string{Postgres: "MERGE", MySQL: "REPLACE"}[o.Dialect], ph), legate.ClassWrite, t.execute))
		execute.ClassFor = t.classOf
		out = append(out, execute)
	}
	return out
}

// classOf is the class of one execute call: destructive when the
// statement deletes rows (DELETE, or MERGE … THEN DELETE) or replaces
// them (REPLACE), else write — also for arguments that do not parse.
func (t *tools) classOf(args json.RawMessage) legate.Class {
	var in struct {
		SQL string `json:"sql"`
	}
	if json.Unmarshal(args, &in) != nil {
		return legate.ClassWrite
	}
	toks, err := lex(t.o.Dialect, in.SQL)
	if err != nil || len(toks) == 0 {
		return legate.ClassWrite
	}
	if t.o.Dialect == MySQL && wordIs(toks[0], "replace") {
		return legate.ClassDestructive
	}
	for _, tok := range toks {
		if wordIs(tok, "delete") {
			return legate.ClassDestructive
		}
	}
	return legate.ClassWrite
}

type tools struct {
	b      Backend
	o      Options
	signer *Signer
}

// pageState is what a query cursor holds.
type pageState struct {
	Query string     `json:"q"` // hash of the statement, params and keyset
	Last  []keyValue `json:"k"` // keyset values of the last row given
}

func (t *tools) query(ctx context.Context, call *connectors.Call, in *queryArgs) (*legate.Result, error) {
	stmt, err := CheckReadAllowing(t.o.Dialect, in.SQL, t.o.AllowFunctions)
	if err != nil {
		return nil, t.prefix(err)
	}
	limit := in.Limit
	switch {
	case limit == 0:
		limit = t.o.DefaultRows
	case limit < 0 || limit > t.o.MaxRows:
		return nil, t.invalid("limit must be between 1 and %d, got %d", t.o.MaxRows, limit)
	}
	args, err := t.params(call.Args)
	if err != nil {
		return nil, err
	}
	for _, k := range in.Keyset {
		if k == "" || len(k) > 128 || strings.ContainsRune(k, 0) {
			return nil, t.invalid("keyset: column names must be 1 to 128 characters")
		}
	}
	hash := digest(stmt.Text, call.Args, in.Keyset)
	var after []any
	if in.Cursor != "" {
		if len(in.Keyset) == 0 {
			return nil, t.invalid("cursor needs the keyset it was made with")
		}
		var st pageState
		if err := t.signer.Open("query", in.Cursor, &st); err != nil || st.Query != hash || len(st.Last) != len(in.Keyset) {
			return nil, t.invalid("%v (a cursor continues the same sql, params and keyset)", ErrCursor)
		}
		for _, kv := range st.Last {
			v, err := kv.decode()
			if err != nil {
				return nil, t.invalid("%v", ErrCursor)
			}
			after = append(after, v)
		}
	}
	sql, args := t.page(stmt, args, in.Keyset, after, limit)
	rows, err := t.b.Read(ctx, call.Credentials, &ReadRequest{SQL: sql, Args: args, Max: limit + 1, Timeout: t.o.Timeout, Schemas: t.o.Schemas,
		Raw: len(in.Keyset) > 0})
	if err != nil {
		return nil, err
	}
	res := &QueryResult{Columns: rows.Columns, Rows: rows.Values}
	if res.Rows == nil {
		res.Rows = [][]any{}
	}
	if len(res.Rows) > limit {
		res.Rows, res.Truncated = res.Rows[:limit], true
	}
	if n, err := t.fit(res.Rows); err != nil {
		return nil, err
	} else if n < len(res.Rows) {
		res.Rows, res.Truncated = res.Rows[:n], true
	}
	res.RowCount = len(res.Rows)
	if res.Truncated && len(in.Keyset) > 0 {
		if res.NextCursor, err = t.cursor(rows, in.Keyset, hash, len(res.Rows)); err != nil {
			return nil, err
		}
	}
	return &legate.Result{Structured: res}, nil
}

// fit returns how many of rows fit in MaxResultBytes (0: no bound); a
// first row alone past it is an error, as no page could hold it.
func (t *tools) fit(rows [][]any) (int, error) {
	if t.o.MaxResultBytes <= 0 {
		return len(rows), nil
	}
	total := 0
	for i, row := range rows {
		total += size(row)
		if total > t.o.MaxResultBytes {
			if i == 0 {
				return 0, t.invalid("the first row is about %d bytes, over max_result_bytes (%d): select fewer or shorter columns (e.g. left(col, 1000))", total, t.o.MaxResultBytes)
			}
			return i, nil
		}
	}
	return len(rows), nil
}

// size is about the length of v in JSON.
func size(v any) int {
	switch x := v.(type) {
	case string:
		return len(x) + 3
	case json.Number:
		return len(x) + 1
	case []any:
		n := 2
		for _, e := range x {
			n += size(e)
		}
		return n
	case map[string]any:
		n := 2
		for k, e := range x {
			n += len(k) + 4 + size(e)
		}
		return n
	}
	return 8
}

// page wraps the statement for one page: with a keyset, ordered by it and
// continuing after the cursor's row; always limited to limit+1 rows
// (mysql without keyset: the backend reads at most that many).
func (t *tools) page(stmt *Statement, args []any, keyset []string, after []any, limit int) (string, []any) {
	if len(keyset) == 0 {
		if t.o.Dialect == MySQL {
			return stmt.Text, args
		}
		return fmt.Sprintf("SELECT * FROM (%s) AS legate_q LIMIT %d", stmt.Text, limit+1), args
	}
	cols := make([]string, len(keyset))
	for i, k := range keyset {
		cols[i] = "legate_q." + t.quote(k)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SELECT * FROM (%s) AS legate_q", stmt.Text)
	if after != nil {
		next := max(stmt.Params, len(args))
		marks := make([]string, len(after))
		for i := range after {
			marks[i] = "?"
			if t.o.Dialect == Postgres {
				marks[i] = fmt.Sprintf("$%d", next+i+1)
			}
		}
		// Ours follow the highest the statement uses: too few or too many
		// params then fail on the count, as without a cursor.
		args = append(args, after...)
		fmt.Fprintf(&b, " WHERE (%s) > (%s)", strings.Join(cols, ", "), strings.Join(marks, ", "))
	}
	fmt.Fprintf(&b, " ORDER BY %s LIMIT %d", strings.Join(cols, ", "), limit+1)
	return b.String(), args
}

// cursor is the next page's cursor: the keyset values of the last row of
// this page, the n-th.
func (t *tools) cursor(rows *Rows, keyset []string, hash string, n int) (string, error) {
	if len(rows.Raw) < n || n < 1 {
		return "", legate.Errorf(legate.CodeAdapterMapping, "%s: the driver's rows were not kept for the cursor", t.o.Type)
	}
	last := rows.Raw[n-1]
	st := pageState{Query: hash}
	for _, k := range keyset {
		i := -1
		for j, c := range rows.Columns {
			if c.Name == k {
				i = j
				break
			}
		}
		if i < 0 || i >= len(last) {
			return "", t.invalid("keyset column %q is not a column of the result", k)
		}
		kv, err := encodeKey(last[i])
		if err != nil {
			return "", t.invalid("%v", err)
		}
		st.Last = append(st.Last, kv)
	}
	return t.signer.Seal("query", st)
}

func (t *tools) execute(ctx context.Context, call *connectors.Call, in *executeArgs) (*legate.Result, error) {
	stmt, err := CheckWrite(t.o.Dialect, in.SQL)
	if err != nil {
		return nil, t.prefix(err)
	}
	if t.o.OperationTable != "" && References(t.o.Dialect, stmt.Text, t.o.OperationTable) {
		return nil, t.invalid("sql guard: the operation table %s keeps retries from writing twice; execute may not name it", t.o.OperationTable)
	}
	args, err := t.params(call.Args)
	if err != nil {
		return nil, err
	}
	key := call.OperationID
	if key == "" {
		key = uuid.NewString()
	}
	if len(key) > 128 {
		sum := sha256.Sum256([]byte(key))
		key = "sha256:" + hex.EncodeToString(sum[:])
	}
	w := &WriteRequest{SQL: stmt.Text, Args: args, Key: key, Hash: digest(stmt.Text, call.Args, nil), Timeout: t.o.Timeout}
	attempts := max(t.o.Attempts, 1)
	for n := 1; ; n++ {
		res, err := t.b.Write(ctx, call.Credentials, w)
		if err == nil {
			res.OperationKey = key
			return &legate.Result{Structured: res}, nil
		}
		if n >= attempts || !t.b.Retryable(err) || ctx.Err() != nil {
			return nil, err
		}
		call.Retry("conflict")
	}
}

func (t *tools) schema(ctx context.Context, call *connectors.Call, in *schemaArgs) (*legate.Result, error) {
	schemas := t.o.Schemas
	if in.Schema != "" {
		found := false
		for _, s := range schemas {
			found = found || s == in.Schema
		}
		if !found {
			return nil, t.invalid("schema %q is not one of this instance's schemas (%s)", in.Schema, strings.Join(schemas, ", "))
		}
		schemas = []string{in.Schema}
	}
	tables, err := t.b.Tables(ctx, call.Credentials, schemas, in.Table, MaxTables+1)
	if err != nil {
		return nil, err
	}
	res := &SchemaResult{Tables: tables}
	if res.Tables == nil {
		res.Tables = []Table{}
	}
	if len(res.Tables) > MaxTables {
		res.Tables, res.Truncated = res.Tables[:MaxTables], true
	}
	return &legate.Result{Structured: res}, nil
}

// params reads the params argument again from the raw arguments.
func (t *tools) params(args json.RawMessage) ([]any, error) {
	out, err := BindParams(t.o.Dialect, args)
	if err != nil {
		return nil, t.invalid("%v", err)
	}
	return out, nil
}

// BindParams reads the params argument of a tool's raw arguments, so that
// numbers keep their exact text, and converts each to its bound value.
func BindParams(d Dialect, args json.RawMessage) ([]any, error) {
	var raw struct {
		Params []json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(args, &raw); err != nil {
		return nil, fmt.Errorf("params: %v", err)
	}
	out := make([]any, len(raw.Params))
	for i, p := range raw.Params {
		v, err := bindParam(d, p)
		if err != nil {
			return nil, fmt.Errorf("params[%d]: %v", i, err)
		}
		out[i] = v
	}
	return out, nil
}

// quote quotes an identifier for the dialect.
func (t *tools) quote(name string) string {
	if t.o.Dialect == MySQL {
		return "`" + strings.ReplaceAll(name, "`", "``") + "`"
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

func (t *tools) invalid(format string, args ...any) *legate.Error {
	return legate.Errorf(legate.CodeInvalidArgument, t.o.Type+": "+format, args...)
}

// prefix adds the connector's name to a guard refusal.
func (t *tools) prefix(err error) error {
	var le *legate.Error
	if errors.As(err, &le) {
		return &legate.Error{Code: le.Code, Message: t.o.Type + ": " + le.Message, Err: err}
	}
	return err
}

// digest identifies a statement, its raw arguments' params and a keyset.
func digest(sql string, args json.RawMessage, keyset []string) string {
	var raw struct {
		Params json.RawMessage `json:"params"`
	}
	json.Unmarshal(args, &raw)
	var params bytes.Buffer
	json.Compact(&params, raw.Params)
	h := sha256.New()
	for _, part := range []string{sql, params.String(), strings.Join(keyset, "\x00")} {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}
