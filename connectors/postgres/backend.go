package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/sqlbase"
)

// extended is passed first to every Query: it keeps the statement on the
// extended protocol whatever the pool's default.
const extended = pgx.QueryExecModeCacheDescribe

// grace is how long past the statement timeout the client waits before it
// cancels the statement itself.
const grace = 2 * time.Second

// Read runs one guarded read in a READ ONLY transaction, in one round
// trip: the transaction's opening, the read and its rollback go to the
// server pipelined (pgx.Batch, over the extended protocol, which runs one
// statement per message). A pool whose connections speak the simple
// protocol (default_query_exec_mode=simple_protocol in the DSN) would send
// a batch as one text of several statements: there the three go one after
// another.
func (c *Connector) Read(ctx context.Context, creds connectors.Credentials, r *sqlbase.ReadRequest) (*sqlbase.Rows, error) {
	pool, err := c.connect(ctx, creds)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.Timeout+grace)
	defer cancel()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	defer conn.Release()
	if conn.Conn().Config().DefaultQueryExecMode == pgx.QueryExecModeSimpleProtocol {
		return c.readInTx(ctx, conn, r)
	}
	b := &pgx.Batch{}
	opening := beginStatements(true, r.Timeout, r.Schemas)
	for _, st := range opening {
		b.Queue(st)
	}
	b.Queue(r.SQL, r.Args...)
	b.Queue("ROLLBACK")
	br := conn.SendBatch(ctx, b)
	var unknown map[int]uint32
	out, err := func() (out *sqlbase.Rows, err error) {
		for range opening {
			if _, err := br.Exec(); err != nil {
				return nil, mapError(err)
			}
		}
		rows, err := br.Query()
		if err != nil {
			return nil, mapError(err)
		}
		out, unknown, err = c.readRows(conn.Conn(), rows, r)
		if err != nil {
			return nil, err
		}
		if _, err := br.Exec(); err != nil {
			return nil, mapError(err)
		}
		return out, nil
	}()
	if cerr := br.Close(); err == nil && cerr != nil {
		err = mapError(cerr)
	}
	if conn.Conn().PgConn().TxStatus() != 'I' {
		// A failed statement skips the rest of the batch, ROLLBACK too.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
		conn.Exec(rctx, "ROLLBACK")
		cancel()
	}
	if err != nil {
		return nil, err
	}
	c.nameTypes(ctx, conn, out, unknown)
	return out, nil
}

// readInTx runs a read as Read does, in three round trips: BEGIN, the
// read, ROLLBACK.
func (c *Connector) readInTx(ctx context.Context, conn *pgxpool.Conn, r *sqlbase.ReadRequest) (*sqlbase.Rows, error) {
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{BeginQuery: begin(true, r.Timeout, r.Schemas)})
	if err != nil {
		return nil, mapError(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	rows, err := tx.Query(ctx, r.SQL, append([]any{extended}, r.Args...)...)
	if err != nil {
		return nil, mapError(err)
	}
	out, unknown, err := c.readRows(tx.Conn(), rows, r)
	if err != nil {
		return nil, err
	}
	c.nameTypes(ctx, tx, out, unknown)
	return out, nil
}

// readRows reads at most r.Max rows of rows, then closes them; unknown
// holds the columns whose type pgx does not know, by index, with its oid.
func (c *Connector) readRows(conn *pgx.Conn, rows pgx.Rows, r *sqlbase.ReadRequest) (out *sqlbase.Rows, unknown map[int]uint32, err error) {
	defer rows.Close()
	fields := rows.FieldDescriptions()
	out = &sqlbase.Rows{Columns: make([]sqlbase.Column, len(fields))}
	tm := conn.TypeMap()
	for i, f := range fields {
		out.Columns[i] = sqlbase.Column{Name: f.Name, Type: c.knownType(conn, f.DataTypeOID)}
		if out.Columns[i].Type == "" {
			if unknown == nil {
				unknown = map[int]uint32{}
			}
			unknown[i] = f.DataTypeOID
		}
	}
	for len(out.Values) < r.Max && rows.Next() {
		raws := rows.RawValues()
		row, vals := make([]any, len(raws)), make([]any, len(raws))
		for i, raw := range raws {
			v, err := decodeValue(tm, &fields[i], raw)
			if err != nil {
				return nil, nil, legate.Errorf(legate.CodeAdapterMapping, "postgres: reading column %s: %v", fields[i].Name, err)
			}
			vals[i] = v
			if s, ok := v.(string); ok && fields[i].DataTypeOID == pgtype.NumericOID {
				row[i] = sqlbase.Decimal(s)
				continue
			}
			row[i] = jsonValue(v, out.Columns[i].Type)
		}
		out.Values = append(out.Values, row)
		if r.Raw {
			out.Raw = append(out.Raw, vals)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, mapError(err)
	}
	return out, unknown, nil
}

// begin is the text that opens a transaction, READ ONLY for reads, with
// its statement timeout and search_path set for it alone: one round trip.
// It is this package's own text (a number, and schema names from the
// config quoted as identifiers), the only one sent over the simple
// protocol, which runs its three statements at once.
func begin(readOnly bool, timeout time.Duration, schemas []string) string {
	return strings.Join(beginStatements(readOnly, timeout, schemas), "; ")
}

// beginStatements are begin's statements, one each.
func beginStatements(readOnly bool, timeout time.Duration, schemas []string) []string {
	path := make([]string, len(schemas))
	for i, s := range schemas {
		path[i] = pgx.Identifier{s}.Sanitize()
	}
	mode := ""
	if readOnly {
		mode = " READ ONLY"
	}
	return []string{"BEGIN" + mode, fmt.Sprintf("SET LOCAL statement_timeout = %d", max(1, timeout.Milliseconds())),
		"SET LOCAL search_path = " + strings.Join(path, ", ")}
}

// textNumeric is pgx's numeric codec preferring the text format, in
// which the server sends a numeric's exact digits (connect).
type textNumeric struct{ pgtype.NumericCodec }

func (textNumeric) PreferredFormat() int16 { return pgtype.TextFormatCode }

// decodeValue decodes one column as pgx's Rows.Values does; numeric in
// text format stays its text.
func decodeValue(tm *pgtype.Map, f *pgconn.FieldDescription, raw []byte) (any, error) {
	switch {
	case raw == nil:
		return nil, nil
	case f.DataTypeOID == pgtype.NumericOID && f.Format == pgx.TextFormatCode:
		return string(raw), nil
	}
	if t, ok := tm.TypeForOID(f.DataTypeOID); ok {
		return t.Codec.DecodeValue(tm, f.DataTypeOID, f.Format, raw)
	}
	if f.Format == pgx.TextFormatCode {
		return string(raw), nil
	}
	return append([]byte{}, raw...), nil
}

// knownType is the name pgx knows for oid, or "" to look up.
func (c *Connector) knownType(conn *pgx.Conn, oid uint32) string {
	if t, ok := conn.TypeMap().TypeForOID(oid); ok {
		return t.Name
	}
	if v, ok := c.types.Load(oid); ok {
		return v.(string)
	}
	return ""
}

// nameTypes asks the server for the names of the types pgx does not know
// (an enum, a domain, an extension's type) of out's columns unknown, by
// index, remembered for the instance; a type it cannot name is "oid:N".
func (c *Connector) nameTypes(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, out *sqlbase.Rows, unknown map[int]uint32) {
	for i, oid := range unknown {
		var name string
		if err := q.QueryRow(ctx, "SELECT format_type($1::oid, NULL)", extended, oid).Scan(&name); err != nil || name == "" {
			out.Columns[i].Type = fmt.Sprintf("oid:%d", oid)
			continue
		}
		c.types.Store(oid, name)
		out.Columns[i].Type = name
	}
}

// Write runs one guarded write with its operation record.
func (c *Connector) Write(ctx context.Context, creds connectors.Credentials, w *sqlbase.WriteRequest) (*sqlbase.ExecResult, error) {
	pool, err := c.connect(ctx, creds)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, w.Timeout+grace)
	defer cancel()
	if err := c.operationTable(ctx, pool); err != nil {
		return nil, err
	}
	table := c.opTable()
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{BeginQuery: begin(false, w.Timeout, c.cfg.Schemas)})
	if err != nil {
		return nil, mapError(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// A second attempt with the key waits here on the first one's row
	// until that transaction ends, then finds the key taken.
	claim, err := exec(ctx, tx, "INSERT INTO "+table+" (instance, op_key, stmt_hash) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
		c.id, w.Key, w.Hash)
	if err != nil {
		return nil, err
	}
	if claim == 0 {
		tx.Rollback(ctx)
		return c.replay(ctx, pool, w)
	}
	n, err := exec(ctx, tx, w.SQL, w.Args...)
	if err != nil {
		return nil, err
	}
	if _, err := exec(ctx, tx, "UPDATE "+table+" SET rows_affected = $3 WHERE instance = $1 AND op_key = $2", c.id, w.Key, n); err != nil {
		return nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, mapError(err)
	}
	return &sqlbase.ExecResult{RowsAffected: n}, nil
}

// exec runs one statement over the extended protocol (tx.Exec would send
// one without arguments over the simple protocol) and returns the rows it
// affected.
func exec(ctx context.Context, tx pgx.Tx, sql string, args ...any) (int64, error) {
	rows, err := tx.Query(ctx, sql, append([]any{extended}, args...)...)
	if err != nil {
		return 0, mapError(err)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, mapError(err)
	}
	return rows.CommandTag().RowsAffected(), nil
}

// replay returns the recorded outcome of w.Key.
func (c *Connector) replay(ctx context.Context, pool *pgxpool.Pool, w *sqlbase.WriteRequest) (*sqlbase.ExecResult, error) {
	var hash string
	var n *int64
	err := pool.QueryRow(ctx, "SELECT stmt_hash, rows_affected FROM "+c.opTable()+" WHERE instance = $1 AND op_key = $2",
		extended, c.id, w.Key).Scan(&hash, &n)
	if err != nil {
		return nil, mapError(err)
	}
	if hash != w.Hash {
		return nil, legate.Errorf(legate.CodeConflict, "postgres: operation key %s was used for another statement or other parameters", w.Key)
	}
	res := &sqlbase.ExecResult{Replayed: true}
	if n != nil {
		res.RowsAffected = *n
	}
	return res, nil
}

// opTable is the operation table's name, quoted, in the first of the
// instance's schemas unless the config names its schema.
func (c *Connector) opTable() string {
	name := strings.Split(c.cfg.OperationTable, ".")
	if len(name) == 1 {
		name = []string{c.cfg.Schemas[0], name[0]}
	}
	return pgx.Identifier(name).Sanitize()
}

// OperationTableDDL is the statement that creates the operation table
// (README).
const OperationTableDDL = `CREATE TABLE IF NOT EXISTS %s (
  instance      text        NOT NULL,
  op_key        text        NOT NULL,
  stmt_hash     text        NOT NULL,
  rows_affected bigint,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (instance, op_key)
)`

// operationTable creates the operation table when it is missing, once per
// instance; a role that may not create it needs it created beforehand.
func (c *Connector) operationTable(ctx context.Context, pool *pgxpool.Pool) error {
	c.opOnce.Lock()
	defer c.opOnce.Unlock()
	if c.opReady {
		return nil
	}
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", extended, c.opTable()).Scan(&exists); err != nil {
		return mapError(err)
	}
	if !exists {
		rows, err := pool.Query(ctx, fmt.Sprintf(OperationTableDDL, c.opTable()), extended)
		if err == nil {
			rows.Close()
			err = rows.Err()
		}
		if err != nil {
			var le *legate.Error
			if errors.As(mapError(err), &le) && le.Code == legate.CodePermissionDenied {
				return legate.Errorf(legate.CodePermissionDenied, "postgres: the operation table %s is missing and the role may not create it: create it as the README shows", c.cfg.OperationTable)
			}
			return mapError(err)
		}
	}
	c.opReady = true
	return nil
}

// Tables lists the tables, views and their columns of schemas.
func (c *Connector) Tables(ctx context.Context, creds connectors.Credentials, schemas []string, like string, limit int) ([]sqlbase.Table, error) {
	pool, err := c.connect(ctx, creds)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(c.cfg.StatementTimeout)+grace)
	defer cancel()
	rows, err := pool.Query(ctx, `
SELECT n.nspname, c.relname, c.relkind::text, a.attname, format_type(a.atttypid, a.atttypmod), NOT a.attnotnull
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.relkind IN ('r', 'v', 'm', 'f', 'p') AND n.nspname = ANY($1)
  AND strpos(c.relname, $2) > 0
  AND has_any_column_privilege(c.oid, 'SELECT')
  AND c.oid IN (SELECT c2.oid FROM pg_catalog.pg_class c2 JOIN pg_catalog.pg_namespace n2 ON n2.oid = c2.relnamespace
                WHERE c2.relkind IN ('r', 'v', 'm', 'f', 'p') AND n2.nspname = ANY($1) AND strpos(c2.relname, $2) > 0
                  AND has_any_column_privilege(c2.oid, 'SELECT')
                ORDER BY n2.nspname, c2.relname LIMIT $3)
ORDER BY n.nspname, c.relname, a.attnum`, extended, schemas, like, limit)
	if err != nil {
		return nil, mapError(err)
	}
	defer rows.Close()
	kinds := map[string]string{"r": "table", "v": "view", "m": "materialized view", "f": "foreign table", "p": "partitioned table"}
	var out []sqlbase.Table
	for rows.Next() {
		var schema, table, kind, col, typ string
		var nullable bool
		if err := rows.Scan(&schema, &table, &kind, &col, &typ, &nullable); err != nil {
			return nil, legate.Errorf(legate.CodeAdapterMapping, "postgres: reading the catalog: %v", err)
		}
		if n := len(out); n == 0 || out[n-1].Schema != schema || out[n-1].Name != table {
			out = append(out, sqlbase.Table{Schema: schema, Name: table, Kind: kinds[kind]})
		}
		t := &out[len(out)-1]
		t.Columns = append(t.Columns, sqlbase.TableColumn{Name: col, Type: typ, Nullable: nullable})
	}
	return out, mapError(rows.Err())
}

// Retryable reports a serialization failure or a deadlock.
func (c *Connector) Retryable(err error) bool { return retryable(err) }
