package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/sqlbase"
)

type describeArgs struct {
	Table  string `json:"table" jsonschema:"Table or view name"`
	Schema string `json:"schema,omitempty" jsonschema:"Its database, one of the instance's; default: the first of them"`
}

// The statements of describe_table. information_schema shows a user only
// the tables it holds some privilege on.
const (
	tableSQL = `SELECT TABLE_TYPE, TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`
	colsSQL  = `SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`
	keysSQL = `SELECT tc.CONSTRAINT_NAME, tc.CONSTRAINT_TYPE, k.COLUMN_NAME,
		COALESCE(k.REFERENCED_TABLE_SCHEMA, ''), COALESCE(k.REFERENCED_TABLE_NAME, ''), COALESCE(k.REFERENCED_COLUMN_NAME, ''),
		COALESCE(r.UPDATE_RULE, ''), COALESCE(r.DELETE_RULE, '')
		FROM information_schema.TABLE_CONSTRAINTS tc
		JOIN information_schema.KEY_COLUMN_USAGE k ON k.CONSTRAINT_SCHEMA = tc.CONSTRAINT_SCHEMA
		  AND k.CONSTRAINT_NAME = tc.CONSTRAINT_NAME AND k.TABLE_NAME = tc.TABLE_NAME
		LEFT JOIN information_schema.REFERENTIAL_CONSTRAINTS r ON r.CONSTRAINT_SCHEMA = tc.CONSTRAINT_SCHEMA
		  AND r.CONSTRAINT_NAME = tc.CONSTRAINT_NAME AND r.TABLE_NAME = tc.TABLE_NAME
		WHERE tc.TABLE_SCHEMA = ? AND tc.TABLE_NAME = ? AND tc.CONSTRAINT_TYPE = 'FOREIGN KEY'
		ORDER BY tc.CONSTRAINT_NAME, k.ORDINAL_POSITION`
	indexSQL = `SELECT INDEX_NAME, NON_UNIQUE, COALESCE(COLUMN_NAME, ''), INDEX_TYPE FROM information_schema.STATISTICS
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY INDEX_NAME, SEQ_IN_INDEX`
	// MariaDB's CHECK_CONSTRAINTS names its table; MySQL's is matched
	// through TABLE_CONSTRAINTS.
	mariaChecksSQL = `SELECT CONSTRAINT_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS
		WHERE CONSTRAINT_SCHEMA = ? AND TABLE_NAME = ? ORDER BY CONSTRAINT_NAME`
	mysqlChecksSQL = `SELECT cc.CONSTRAINT_NAME, cc.CHECK_CLAUSE FROM information_schema.TABLE_CONSTRAINTS tc
		JOIN information_schema.CHECK_CONSTRAINTS cc ON cc.CONSTRAINT_SCHEMA = tc.CONSTRAINT_SCHEMA AND cc.CONSTRAINT_NAME = tc.CONSTRAINT_NAME
		WHERE tc.TABLE_SCHEMA = ? AND tc.TABLE_NAME = ? AND tc.CONSTRAINT_TYPE = 'CHECK' ORDER BY cc.CONSTRAINT_NAME`
)

var kinds = map[string]string{"BASE TABLE": "table", "VIEW": "view", "SYSTEM VERSIONED": "table", "SEQUENCE": "sequence"}

func (t *tools) describe(ctx context.Context, call *connectors.Call, in *describeArgs) (*legate.Result, error) {
	if in.Table == "" || len(in.Table) > 64 {
		return nil, invalid("table must be 1 to 64 characters")
	}
	schema, err := t.schemaOf(in.Schema)
	if err != nil {
		return nil, err
	}
	rows, err := t.read(ctx, call, tableSQL, schema, in.Table)
	if err != nil {
		return nil, err
	}
	if len(rows.Values) == 0 {
		return nil, legate.Errorf(legate.CodeNotFound, "mysql: no table or view %q that the user may see in database %s: "+
			"the schema tool lists those there are", in.Table, schema)
	}
	d := &sqlbase.TableDescription{Schema: schema, Name: in.Table, Kind: kinds[str(rows.Values[0][0])], PrimaryKey: []string{},
		ForeignKeys: []sqlbase.ForeignKey{}, Indexes: []sqlbase.Index{}, Checks: []sqlbase.Constraint{}, Uniques: []sqlbase.Constraint{}}
	if d.Kind == "" {
		d.Kind = strings.ToLower(str(rows.Values[0][0]))
	}
	if v := rows.Values[0][1]; v != nil && d.Kind != "view" {
		n := integer(v)
		d.RowEstimate = &n
	}
	if rows, err = t.read(ctx, call, colsSQL, schema, in.Table); err != nil {
		return nil, err
	}
	for _, r := range rows.Values {
		c := sqlbase.DescribedColumn{Name: str(r[0]), Type: str(r[1]), Nullable: str(r[2]) == "YES"}
		// MariaDB shows a column without a default as NULL and one
		// defaulting to NULL as the text NULL: neither has a default.
		if r[3] != nil && str(r[3]) != "NULL" {
			s := str(r[3])
			c.Default = &s
		}
		d.Columns = append(d.Columns, c)
	}
	if err := t.keys(ctx, call, schema, d); err != nil {
		return nil, err
	}
	if err := t.indexes(ctx, call, schema, d); err != nil {
		return nil, err
	}
	maria, err := t.mariaDB(ctx, call)
	if err != nil {
		return nil, err
	}
	checks := map[bool]string{true: mariaChecksSQL, false: mysqlChecksSQL}[maria]
	if rows, err = t.read(ctx, call, checks, schema, in.Table); err != nil {
		return nil, err
	}
	for _, r := range rows.Values {
		d.Checks = append(d.Checks, sqlbase.Constraint{Name: str(r[0]), Definition: "CHECK (" + str(r[1]) + ")"})
	}
	return &legate.Result{Structured: d}, nil
}

// keys fills the foreign keys. (TABLE_CONSTRAINTS shows a user holding
// only SELECT no keys on MariaDB: the primary key and unique constraints
// come from the indexes, which STATISTICS shows it.)
func (t *tools) keys(ctx context.Context, call *connectors.Call, schema string, d *sqlbase.TableDescription) error {
	rows, err := t.read(ctx, call, keysSQL, schema, d.Name)
	if err != nil {
		return err
	}
	for _, r := range rows.Values {
		name, typ, col := str(r[0]), str(r[1]), str(r[2])
		switch typ {
		case "FOREIGN KEY":
			if n := len(d.ForeignKeys); n == 0 || d.ForeignKeys[n-1].Name != name {
				d.ForeignKeys = append(d.ForeignKeys, sqlbase.ForeignKey{Name: name, RefSchema: str(r[3]), RefTable: str(r[4]),
					OnUpdate: str(r[6]), OnDelete: str(r[7])})
			}
			fk := &d.ForeignKeys[len(d.ForeignKeys)-1]
			fk.Columns = append(fk.Columns, col)
			fk.RefColumns = append(fk.RefColumns, str(r[5]))
		}
	}
	return nil
}

// indexes fills the indexes; a part that is an expression (MySQL 8's
// functional indexes) has no column name and is given as "".
func (t *tools) indexes(ctx context.Context, call *connectors.Call, schema string, d *sqlbase.TableDescription) error {
	rows, err := t.read(ctx, call, indexSQL, schema, d.Name)
	if err != nil {
		return err
	}
	for _, r := range rows.Values {
		name := str(r[0])
		if n := len(d.Indexes); n == 0 || d.Indexes[n-1].Name != name {
			d.Indexes = append(d.Indexes, sqlbase.Index{Name: name, Unique: integer(r[1]) == 0, Primary: name == "PRIMARY",
				Method: str(r[3]), Columns: []string{}})
		}
		ix := &d.Indexes[len(d.Indexes)-1]
		ix.Columns = append(ix.Columns, str(r[2]))
	}
	// A primary key or UNIQUE constraint is its index in MySQL.
	for _, ix := range d.Indexes {
		switch {
		case ix.Primary:
			d.PrimaryKey = ix.Columns
		case ix.Unique:
			d.Uniques = append(d.Uniques, sqlbase.Constraint{Name: ix.Name, Columns: ix.Columns})
		}
	}
	return nil
}

type sampleArgs struct {
	Table  string `json:"table" jsonschema:"Table or view name"`
	Schema string `json:"schema,omitempty" jsonschema:"Its database, one of the instance's; default: the connection's database"`
	Limit  int    `json:"limit,omitempty" jsonschema:"Rows, 1 to the instance's max_rows (default 10)"`
}

// sample reads the first rows of a table: SELECT * FROM it with a LIMIT,
// through the guard as a query would be.
func (t *tools) sample(ctx context.Context, call *connectors.Call, in *sampleArgs) (*legate.Result, error) {
	if in.Table == "" || len(in.Table) > 64 {
		return nil, invalid("table must be 1 to 64 characters")
	}
	limit := in.Limit
	switch {
	case limit == 0:
		limit = min(10, t.o.MaxRows)
	case limit < 0 || limit > t.o.MaxRows:
		return nil, invalid("limit must be between 1 and %d, got %d", t.o.MaxRows, limit)
	}
	name := quote(in.Table)
	if in.Schema != "" {
		if _, err := t.schemaOf(in.Schema); err != nil {
			return nil, err
		}
		name = quote(in.Schema) + "." + name
	}
	stmt, err := sqlbase.CheckReadAllowing(sqlbase.MySQL, fmt.Sprintf("SELECT * FROM %s LIMIT %d", name, limit+1), t.o.AllowFunctions)
	if err != nil {
		return nil, prefix(err)
	}
	rows, err := t.b.Read(ctx, call.Credentials, &sqlbase.ReadRequest{SQL: stmt.Text, Max: limit + 1, Timeout: t.o.Timeout})
	if err != nil {
		return nil, err
	}
	res := &sqlbase.QueryResult{Columns: rows.Columns, Rows: [][]any{}}
	size := 0
	for i, row := range rows.Values {
		b, _ := json.Marshal(row)
		size += len(b)
		if i == limit || t.o.MaxResultBytes > 0 && size > t.o.MaxResultBytes && i > 0 {
			res.Truncated = true
			break
		}
		res.Rows = append(res.Rows, row)
	}
	res.RowCount = len(res.Rows)
	return &legate.Result{Structured: res}, nil
}

func quote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }
