package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/sqlbase"
)

// grace is how long past the statement timeout the client waits before it
// gives the statement up itself.
const grace = 2 * time.Second

// session takes a connection of its own and sets its statement timeout
// and select limit (0: the server's default), which every call sets anew
// so none inherits another's.
func (c *Connector) session(ctx context.Context, creds connectors.Credentials, timeout time.Duration, limit int) (*sql.Conn, error) {
	db, err := c.connect(ctx, creds)
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	maria, err := c.isMariaDB(ctx, conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	sel := "DEFAULT"
	if limit > 0 {
		sel = fmt.Sprint(limit)
	}
	set := fmt.Sprintf("SET SESSION max_execution_time = %d, sql_select_limit = %s", max(1, timeout.Milliseconds()), sel)
	if maria {
		set = fmt.Sprintf("SET SESSION max_statement_time = %.3f, sql_select_limit = %s", max(0.001, timeout.Seconds()), sel)
	}
	if _, err := conn.ExecContext(ctx, set); err != nil {
		conn.Close()
		return nil, mapError(err)
	}
	return conn, nil
}

// isMariaDB probes the server once per pool.
func (c *Connector) isMariaDB(ctx context.Context, conn *sql.Conn) (bool, error) {
	c.mu.Lock()
	probed, maria := c.probed, c.maria
	c.mu.Unlock()
	if probed {
		return maria, nil
	}
	var version string
	if err := conn.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return false, mapError(err)
	}
	maria = strings.Contains(strings.ToLower(version), "mariadb")
	c.mu.Lock()
	c.probed, c.maria = true, maria
	c.mu.Unlock()
	return maria, nil
}

// Read runs one guarded read as a prepared statement in a READ ONLY
// transaction. Its answer does not wait for the rest: closing the rows
// and the statement, the ROLLBACK's round trip and giving the connection
// back to the pool happen after it, in the background, as a read changes
// nothing for them to wait on.
func (c *Connector) Read(ctx context.Context, creds connectors.Credentials, r *sqlbase.ReadRequest) (*sqlbase.Rows, error) {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout+grace)
	var closers []func() error // in the order opened
	defer func() {
		go func() {
			for i := len(closers) - 1; i >= 0; i-- {
				closers[i]()
			}
			cancel() // after the ROLLBACK: a transaction whose context ends is rolled back and its connection dropped
		}()
	}()
	conn, err := c.session(ctx, creds, r.Timeout, r.Max)
	if err != nil {
		return nil, err
	}
	closers = append(closers, conn.Close)
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, mapError(err)
	}
	closers = append(closers, tx.Rollback)
	stmt, err := tx.PrepareContext(ctx, r.SQL)
	if err != nil {
		return nil, mapError(err)
	}
	closers = append(closers, stmt.Close)
	rows, err := stmt.QueryContext(ctx, r.Args...)
	if err != nil {
		return nil, mapError(err)
	}
	closers = append(closers, rows.Close)
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, mapError(err)
	}
	out := &sqlbase.Rows{Columns: make([]sqlbase.Column, len(types))}
	for i, t := range types {
		out.Columns[i] = sqlbase.Column{Name: t.Name(), Type: t.DatabaseTypeName()}
	}
	vals := make([]any, len(types))
	ptrs := make([]any, len(types))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for len(out.Values) < r.Max && rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, legate.Errorf(legate.CodeAdapterMapping, "mysql: reading a row: %v", err)
		}
		row, raw := make([]any, len(vals)), make([]any, len(vals))
		for i, v := range vals {
			row[i], raw[i] = jsonValue(v, out.Columns[i].Type)
		}
		out.Values = append(out.Values, row)
		if r.Raw {
			out.Raw = append(out.Raw, raw)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, mapError(err)
	}
	return out, nil
}

// Write runs one guarded write with its operation record.
func (c *Connector) Write(ctx context.Context, creds connectors.Credentials, w *sqlbase.WriteRequest) (*sqlbase.ExecResult, error) {
	ctx, cancel := context.WithTimeout(ctx, w.Timeout+grace)
	defer cancel()
	conn, err := c.session(ctx, creds, w.Timeout, 0)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := c.operationTable(ctx, conn); err != nil {
		return nil, err
	}
	table := c.opTable()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, mapError(err)
	}
	defer tx.Rollback()
	// A second attempt with the key waits here on the first one's row
	// until that transaction ends, then finds the key taken.
	claim, err := tx.ExecContext(ctx, "INSERT INTO "+table+" (instance, op_key, stmt_hash) VALUES (?, ?, ?) "+
		"ON DUPLICATE KEY UPDATE op_key = op_key", c.id, w.Key, w.Hash)
	if err != nil {
		return nil, mapError(err)
	}
	if n, _ := claim.RowsAffected(); n == 0 {
		tx.Rollback()
		return c.replay(ctx, conn, w)
	}
	stmt, err := tx.PrepareContext(ctx, w.SQL)
	if err != nil {
		return nil, mapError(err)
	}
	defer stmt.Close()
	res, err := stmt.ExecContext(ctx, w.Args...)
	if err != nil {
		return nil, mapError(err)
	}
	out := &sqlbase.ExecResult{}
	out.RowsAffected, _ = res.RowsAffected()
	if id, err := res.LastInsertId(); err == nil && id != 0 {
		out.LastInsertID = &id
	}
	if _, err := tx.ExecContext(ctx, "UPDATE "+table+" SET rows_affected = ?, last_insert_id = ? WHERE instance = ? AND op_key = ?",
		out.RowsAffected, out.LastInsertID, c.id, w.Key); err != nil {
		return nil, mapError(err)
	}
	if err := tx.Commit(); err != nil {
		return nil, mapError(err)
	}
	return out, nil
}

// replay returns the recorded outcome of w.Key.
func (c *Connector) replay(ctx context.Context, conn *sql.Conn, w *sqlbase.WriteRequest) (*sqlbase.ExecResult, error) {
	var hash string
	var n, id sql.NullInt64
	err := conn.QueryRowContext(ctx, "SELECT stmt_hash, rows_affected, last_insert_id FROM "+c.opTable()+
		" WHERE instance = ? AND op_key = ?", c.id, w.Key).Scan(&hash, &n, &id)
	if err != nil {
		return nil, mapError(err)
	}
	if hash != w.Hash {
		return nil, legate.Errorf(legate.CodeConflict, "mysql: operation key %s was used for another statement or other parameters", w.Key)
	}
	res := &sqlbase.ExecResult{Replayed: true, RowsAffected: n.Int64}
	if id.Valid {
		res.LastInsertID = &id.Int64
	}
	return res, nil
}

// opTable is the operation table's name, quoted.
func (c *Connector) opTable() string {
	parts := strings.Split(c.cfg.OperationTable, ".")
	for i, p := range parts {
		parts[i] = "`" + p + "`"
	}
	return strings.Join(parts, ".")
}

// OperationTableDDL creates the operation table (README).
const OperationTableDDL = "CREATE TABLE IF NOT EXISTS %s (\n" +
	"  instance       VARCHAR(128) NOT NULL,\n" +
	"  op_key         VARCHAR(191) NOT NULL,\n" +
	"  stmt_hash      CHAR(64)     NOT NULL,\n" +
	"  rows_affected  BIGINT       NULL,\n" +
	"  last_insert_id BIGINT       NULL,\n" +
	"  created_at     TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),\n" +
	"  PRIMARY KEY (instance, op_key)\n" +
	") ENGINE=InnoDB"

// operationTable creates the operation table when it is missing, once per
// instance.
func (c *Connector) operationTable(ctx context.Context, conn *sql.Conn) error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	if c.opReady {
		return nil
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(OperationTableDDL, c.opTable())); err != nil {
		le := mapError(err).(*legate.Error)
		if le.Code == legate.CodePermissionDenied {
			return legate.Errorf(legate.CodePermissionDenied, "mysql: the operation table %s is missing or the user may not create it: create it as the README shows", c.cfg.OperationTable)
		}
		return le
	}
	c.opReady = true
	return nil
}

// Tables lists the tables, views and their columns of schemas.
func (c *Connector) Tables(ctx context.Context, creds connectors.Credentials, schemas []string, like string, limit int) ([]sqlbase.Table, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(c.cfg.StatementTimeout)+grace)
	defer cancel()
	conn, err := c.session(ctx, creds, time.Duration(c.cfg.StatementTimeout), 0)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	args := []any{}
	marks := make([]string, len(schemas))
	for i, s := range schemas {
		marks[i] = "?"
		args = append(args, s)
	}
	args = append(args, like)
	rows, err := conn.QueryContext(ctx, `
SELECT c.TABLE_SCHEMA, c.TABLE_NAME, t.TABLE_TYPE, c.COLUMN_NAME, c.COLUMN_TYPE, c.IS_NULLABLE = 'YES'
FROM information_schema.COLUMNS c
JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME
WHERE c.TABLE_SCHEMA IN (`+strings.Join(marks, ", ")+`) AND INSTR(c.TABLE_NAME, ?) > 0
ORDER BY c.TABLE_SCHEMA, c.TABLE_NAME, c.ORDINAL_POSITION`, args...)
	if err != nil {
		return nil, mapError(err)
	}
	defer rows.Close()
	kinds := map[string]string{"BASE TABLE": "table", "VIEW": "view", "SYSTEM VERSIONED": "table", "SEQUENCE": "sequence",
		"TEMPORARY": "temporary table", "SYSTEM VIEW": "view"}
	var out []sqlbase.Table
	for rows.Next() {
		var schema, table, kind, col, typ string
		var nullable bool
		if err := rows.Scan(&schema, &table, &kind, &col, &typ, &nullable); err != nil {
			return nil, legate.Errorf(legate.CodeAdapterMapping, "mysql: reading the catalog: %v", err)
		}
		if n := len(out); n == 0 || out[n-1].Schema != schema || out[n-1].Name != table {
			if n == limit {
				break
			}
			k := kinds[kind]
			if k == "" {
				k = strings.ToLower(kind)
			}
			out = append(out, sqlbase.Table{Schema: schema, Name: table, Kind: k})
		}
		t := &out[len(out)-1]
		t.Columns = append(t.Columns, sqlbase.TableColumn{Name: col, Type: typ, Nullable: nullable})
	}
	return out, mapError(rows.Err())
}

// Retryable reports a deadlock or a lock wait timeout.
func (c *Connector) Retryable(err error) bool { return retryable(err) }
