// Package sqlbase is what the SQL connectors (postgres, mysql) share: the
// statement guard, the three tools (query, execute, schema) with their
// arguments, results and output schemas, keyset paging with signed
// cursors, and the JSON forms of database values.
//
// A connector supplies a [Backend], which owns the connection pool and
// runs each request the way its database makes safe:
//
//	tools := sqlbase.Tools(backend, sqlbase.Options{Dialect: sqlbase.Postgres, Type: "postgres", ...})
//
// The read path, outermost first — each layer holds when the next fails:
//
//  1. the database role the operator grants (read-only for query-only
//     instances; documented in each connector's README);
//  2. [CheckRead]: one SELECT or WITH … SELECT, comments removed, no
//     semicolon chaining, no INTO, no locking, and calls only of the
//     built-in read-only functions and those the operator allows (an
//     allowlist: funcs.go), never of one that reaches files, programs,
//     settings, other sessions or runs SQL given as text;
//  3. the backend sends the checked text as one statement over the
//     extended (postgres) or prepared-statement (mysql) protocol, which
//     refuses a second statement, in a READ ONLY transaction with a
//     statement timeout, rows capped.
//
// Writes ([CheckWrite]) run one data-modifying statement in a transaction
// that also records its operation key, so a retry with the same key
// returns the first outcome and writes nothing.
package sqlbase

import (
	"context"
	"time"

	"github.com/legate-mcp/legate/connectors"
)

// Limits of a SQL instance's configuration.
const (
	// HardMaxRows caps max_rows: no page is larger.
	HardMaxRows = 1000
	// MaxTables caps the tables one schema call lists.
	MaxTables = 500
)

// Backend runs the requests of the tools against one database. Its
// errors are *legate.Error with a canonical code and the connector's name
// as prefix; Retryable tells which of them a new transaction may cure.
type Backend interface {
	// Read runs r.SQL with r.Args bound, as one statement over the
	// protocol that refuses more than one, inside a READ ONLY transaction
	// whose statement timeout is r.Timeout, and returns at most r.Max rows.
	Read(ctx context.Context, creds connectors.Credentials, r *ReadRequest) (*Rows, error)
	// Write runs w.SQL with w.Args bound in one transaction that also
	// records w.Key in the operation table; a key already recorded
	// returns the recorded outcome (Replayed set) and runs nothing.
	Write(ctx context.Context, creds connectors.Credentials, w *WriteRequest) (*ExecResult, error)
	// Tables lists the tables and columns of schemas the role can see,
	// at most max tables, those whose name contains like when set.
	Tables(ctx context.Context, creds connectors.Credentials, schemas []string, like string, max int) ([]Table, error)
	// Retryable reports whether err (from Read or Write) is a passing
	// conflict — a serialization failure or deadlock — after which the
	// whole transaction may run again.
	Retryable(err error) bool
}

// ReadRequest is one guarded read.
type ReadRequest struct {
	// SQL is the guard's text, wrapped for keyset paging when asked.
	SQL  string
	Args []any
	// Max is the most rows to return: the page plus one, to tell that
	// there is more.
	Max int
	// Timeout is the statement timeout.
	Timeout time.Duration
	// Schemas, for postgres, are the search_path of the statement.
	Schemas []string
	// Raw asks for Rows.Raw, the rows as the driver returned them.
	Raw bool
}

// Rows is the answer to a read.
type Rows struct {
	Columns []Column
	// Values are the rows in JSON-ready form: numbers, strings (times in
	// RFC 3339, binary in base64), booleans, JSON values, nil for NULL.
	Values [][]any
	// Raw are the rows as the driver returned them, when asked (keyset
	// cursors bind them again).
	Raw [][]any
}

// WriteRequest is one guarded write.
type WriteRequest struct {
	SQL  string
	Args []any
	// Key is the operation key; Hash identifies the statement and its
	// arguments, so that a key reused for another write is a conflict.
	Key, Hash string
	Timeout   time.Duration
}

// Options configure the tools of one instance.
type Options struct {
	Dialect Dialect
	// Type is the connector type, the prefix of every error.
	Type string
	// Instance is the instance id, to which cursors are bound.
	Instance string
	// DefaultRows and MaxRows bound a page.
	DefaultRows, MaxRows int
	// MaxResultBytes bounds a page's rows, as their JSON would measure
	// roughly: a page is cut (truncated) before the row that would pass it.
	MaxResultBytes int
	// Timeout is the statement timeout of query and execute.
	Timeout time.Duration
	// Schemas are the schemas (postgres) or databases (mysql) schema
	// lists, and postgres queries' search_path.
	Schemas []string
	// ReadOnly leaves execute out.
	ReadOnly bool
	// Attempts bounds the transactions of one execute retried after a
	// serialization failure or deadlock (1: no retry).
	Attempts int
	// OperationTable is the table of operation keys, which execute may
	// not name.
	OperationTable string
	// AllowFunctions are the functions query may call beyond the
	// built-in read-only ones (allow_functions); nil for none.
	AllowFunctions *Funcs
}
