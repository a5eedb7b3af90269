package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"sync"
)

// Dialect is what a backend does its own way; the statements of the
// stores are the same on every backend.
type Dialect struct {
	// Numbered says the backend numbers its placeholders ($1, $2, …,
	// PostgreSQL) where the statements here write ? (SQLite).
	Numbered bool
	// Duplicate reports whether err is the backend refusing a row because
	// its primary key or another unique key is taken.
	Duplicate func(err error) bool
	// AuditLock is the statement an audit append runs first in its
	// transaction, holding a lock to its commit so that audit ids become
	// visible in order; "" where every write transaction holds the
	// database's write lock from its BEGIN (SQLite, _txlock=immediate).
	AuditLock string
	// BindingLock is the statement an approval Open runs first in its
	// transaction, given the binding's 32-bit hash: the Opens of one
	// binding, in every process, run one after another. "" as AuditLock.
	BindingLock string
	// ForUpdate ends a SELECT that locks the row it reads in a
	// transaction; "" as AuditLock.
	ForUpdate string
	// Snapshot is the transaction in which reads spanning two tables see
	// one state of both; nil where they run without one (SQLite: its
	// transactions all take the write lock).
	Snapshot *sql.TxOptions
	// Watch, when set, tells of every approval whose state changes, in
	// any process on the database, sending its id, or "" when changes may
	// have been missed; the channel closes when ctx ends.
	Watch func(ctx context.Context) <-chan string
	// WatchEvents, when set, tells of every event added, in any process on
	// the database, sending its instance id (store.EventWatcher).
	WatchEvents func(ctx context.Context) <-chan string
}

// rebind writes query, whose placeholders are ?, in the dialect's
// placeholders. No statement here holds a ? in a string literal.
func (d *Dialect) rebind(query string) string {
	if !d.Numbered || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] != '?' {
			b.WriteByte(query[i])
			continue
		}
		n++
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}

// database is a database whose statements are rebound for its dialect.
type database struct {
	db    *sql.DB
	d     *Dialect
	stmts *sync.Map // query → *sql.Stmt, the statements prepared once (prepared)
}

// prepared is query prepared on db, once: for the statements run often
// with many placeholders (insertRows), whose parsing would otherwise cost
// more than their execution on SQLite. Each connection prepares it once
// too, when a transaction on it first runs it.
func (db database) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := db.stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := db.db.PrepareContext(ctx, db.d.rebind(query))
	if err == nil {
		db.stmts.Store(query, st) // a racing twin stays open: at most one per caller, once
	}
	return st, err
}

// ExecContext runs a statement.
func (db database) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return db.db.ExecContext(ctx, db.d.rebind(query), args...)
}

// QueryContext runs a query.
func (db database) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return db.db.QueryContext(ctx, db.d.rebind(query), args...)
}

// QueryRowContext runs a query of one row.
func (db database) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return db.db.QueryRowContext(ctx, db.d.rebind(query), args...)
}

// BeginTx begins a transaction.
func (db database) BeginTx(ctx context.Context, opts *sql.TxOptions) (transaction, error) {
	tx, err := db.db.BeginTx(ctx, opts)
	return transaction{tx, db}, err
}

// tx runs fn in a transaction, committed if fn returns nil.
func (db database) tx(ctx context.Context, fn func(transaction) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// transaction is a transaction whose statements are rebound for its dialect.
type transaction struct {
	tx *sql.Tx
	db database
}

// ExecContext runs a statement.
func (tx transaction) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.tx.ExecContext(ctx, tx.db.d.rebind(query), args...)
}

// execPrepared runs a statement the database keeps prepared (prepared).
func (tx transaction) execPrepared(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := tx.db.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	return tx.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
}

// QueryContext runs a query.
func (tx transaction) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return tx.tx.QueryContext(ctx, tx.db.d.rebind(query), args...)
}

// QueryRowContext runs a query of one row.
func (tx transaction) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return tx.tx.QueryRowContext(ctx, tx.db.d.rebind(query), args...)
}

// lock runs one of the dialect's lock statements, if it has one.
func (tx transaction) lock(ctx context.Context, stmt string, args ...any) error {
	if stmt == "" {
		return nil
	}
	_, err := tx.ExecContext(ctx, stmt, args...)
	return err
}

// Commit commits the transaction.
func (tx transaction) Commit() error { return tx.tx.Commit() }

// Rollback rolls the transaction back; after Commit it does nothing.
func (tx transaction) Rollback() error { return tx.tx.Rollback() }

// duplicate reports whether err is the backend refusing a row because a
// unique key is taken.
func (db database) duplicate(err error) bool { return db.d.Duplicate(err) }

func (tx transaction) duplicate(err error) bool { return tx.db.d.Duplicate(err) }

// execer is the database or a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	duplicate(err error) bool
}

// querier is the database or a transaction.
type querier interface {
	execer
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// read runs fn in the dialect's Snapshot, or on the database where it
// has none.
func (db database) read(ctx context.Context, fn func(querier) error) error {
	if db.d.Snapshot == nil {
		return fn(db)
	}
	tx, err := db.BeginTx(ctx, db.d.Snapshot)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}
