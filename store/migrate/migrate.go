// Package migrate checks a store and moves a deployment from the embedded
// store to PostgreSQL: Check reports a store's schema version, its pending
// migrations and its row counts (legate store check); Copy copies every
// row of a SQLite store into a PostgreSQL one (legate store migrate).
//
// The copy moves rows as they are: ids, states, times, token hashes,
// heartbeats, and vault secrets as ciphertext with their wrapped data
// keys (the vault's key ring is not needed, and must be the same on the
// replicas afterwards). It is resumable: each row whose key the target
// holds already is kept as it is there, so running it again after a stop
// copies only the rest. The target records the sources copied into it
// (its imports table); a target holding rows of anything else is refused
// unless Force is set.
package migrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/legate-mcp/legate/store/postgres"
	"github.com/legate-mcp/legate/store/sqlite"
)

// TableCount is one table of a check or a copy.
type TableCount struct {
	Table string `json:"table"`
	What  string `json:"what"`
	// Rows are the rows in the store checked, or in the copy's source.
	Rows int64 `json:"rows"`
	// Copied are the rows a copy wrote; Kept, those whose key the target
	// held already (copied by an earlier run) and that it left as they were.
	Copied int64 `json:"copied,omitempty"`
	Kept   int64 `json:"kept,omitempty"`
}

// Options tune a copy.
type Options struct {
	// Force copies into a target that holds rows not copied from this
	// source; rows whose keys it holds are kept as they are there.
	Force bool
	// Progress is told of each table once it is copied; nil tells nobody.
	Progress func(TableCount)
}

// Report is what a copy did.
type Report struct {
	Source string `json:"source"`
	// Resumed is true when an earlier run had started copying this source.
	Resumed bool         `json:"resumed"`
	Tables  []TableCount `json:"tables"`
}

// ErrTargetInUse is a target holding rows that were not copied from the
// source: the caller says what it holds and that Force copies anyway.
var ErrTargetInUse = errors.New("the target store holds data that was not copied from this source")

// batch is how many rows one INSERT writes.
const batch = 500

// Copy copies the SQLite store at path into dst. It first brings the
// source's schema up to date, as any command of this version opening it
// would; it then reads it without writing.
func Copy(ctx context.Context, path string, dst *postgres.Store, opts *Options) (*Report, error) {
	if opts == nil {
		opts = &Options{}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	src, err := openSQLite(ctx, abs, true)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	rep := &Report{Source: "sqlite://" + abs}
	pool := dst.DB()
	var started int64
	err = pool.QueryRowContext(ctx, `SELECT started_at FROM imports WHERE source = $1`, rep.Source).Scan(&started)
	switch {
	case err == nil:
		rep.Resumed = true
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("reading the target's imports: %w", err)
	case !opts.Force:
		held, err := counts(ctx, dbCounter(pool))
		if err != nil {
			return nil, err
		}
		var some []string
		for _, c := range held {
			if c.Rows > 0 {
				some = append(some, fmt.Sprintf("%d %s", c.Rows, c.What))
			}
		}
		if len(some) > 0 {
			return nil, fmt.Errorf("%w: it holds %s; copy into an empty database, or force it (rows with keys the target holds are kept as they are there)",
				ErrTargetInUse, strings.Join(some, ", "))
		}
	}
	if _, err := pool.ExecContext(ctx, `INSERT INTO imports (source, started_at) VALUES ($1, $2) ON CONFLICT (source) DO NOTHING`,
		rep.Source, time.Now().Unix()); err != nil {
		return nil, fmt.Errorf("recording the copy: %w", err)
	}
	for _, t := range plan {
		c, err := copyTable(ctx, src, pool, t)
		if err != nil {
			return rep, fmt.Errorf("copying %s: %w", t.what, err)
		}
		rep.Tables = append(rep.Tables, c)
		if opts.Progress != nil {
			opts.Progress(c)
		}
	}
	return rep, finish(ctx, src, pool, rep.Source)
}

// copyTable copies one table in key order, a batch per statement.
func copyTable(ctx context.Context, src *sql.DB, dst *sql.DB, t table) (TableCount, error) {
	c := TableCount{Table: t.name, What: t.what}
	names := make([]string, len(t.cols))
	for i, col := range t.cols {
		names[i] = col.name
	}
	rows, err := src.QueryContext(ctx, `SELECT `+strings.Join(names, ", ")+` FROM `+t.name+` ORDER BY `+t.order)
	if err != nil {
		return c, err
	}
	defer rows.Close()
	var args []any
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		res, err := dst.ExecContext(ctx, insertSQL(t, names, n), args...)
		if err != nil {
			return err
		}
		copied, err := res.RowsAffected()
		if err != nil {
			return err
		}
		c.Copied += copied
		c.Kept += int64(n) - copied
		args, n = args[:0], 0
		return nil
	}
	vals := make([]any, len(t.cols))
	ptrs := make([]any, len(t.cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return c, err
		}
		for i, col := range t.cols {
			args = append(args, as(col.kind, vals[i]))
		}
		c.Rows++
		if n++; n == batch {
			if err := flush(); err != nil {
				return c, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return c, err
	}
	return c, flush()
}

// insertSQL inserts n rows, each kept if its key (or any unique value,
// such as a token's hash) is taken.
func insertSQL(t table, names []string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", t.name, strings.Join(names, ", "))
	p := 1
	for r := range n {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for i := range names {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "$%d", p)
			p++
		}
		b.WriteByte(')')
	}
	b.WriteString(" ON CONFLICT DO NOTHING")
	return b.String()
}

// as converts a SQLite value to what PostgreSQL's column of kind takes:
// SQLite keeps a value's own type, not its column's.
func as(kind byte, v any) any {
	switch kind {
	case text:
		if b, ok := v.([]byte); ok {
			return string(b)
		}
	case bytes:
		if s, ok := v.(string); ok {
			return []byte(s)
		}
	}
	return v
}

// finish moves the audit log's and the events' id sequences past the copied ids, makes
// every replica reload the tool caches and pins (a cache version past
// both stores'), and records the copy finished.
func finish(ctx context.Context, src *sql.DB, dst *sql.DB, source string) error {
	var ver int64
	if err := src.QueryRowContext(ctx, `SELECT version FROM cache_version WHERE id = 1`).Scan(&ver); err != nil {
		return fmt.Errorf("reading the source's cache version: %w", err)
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`SELECT setval(pg_get_serial_sequence('audit', 'id'), (SELECT COALESCE(MAX(id), 0) + 1 FROM audit), false)`, nil},
		{`SELECT setval(pg_get_serial_sequence('events', 'id'), (SELECT COALESCE(MAX(id), 0) + 1 FROM events), false)`, nil},
		{`UPDATE cache_version SET version = GREATEST(version, $1) + 1 WHERE id = 1`, []any{ver}},
		{`UPDATE imports SET finished_at = $1 WHERE source = $2`, []any{time.Now().Unix(), source}},
	} {
		if _, err := dst.ExecContext(ctx, q.sql, q.args...); err != nil {
			return fmt.Errorf("finishing the copy: %w", err)
		}
	}
	return nil
}

// openSQLite opens the SQLite store at path to read it. With upgrade, its
// schema is first brought up to date by the embedded store itself.
func openSQLite(ctx context.Context, path string, upgrade bool) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	if upgrade {
		st, err := sqlite.OpenFile(ctx, path)
		if err != nil {
			return nil, err
		}
		st.Close()
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	var v int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: reading its schema version: %w", path, err)
	}
	if upgrade && v != SQLiteSchema {
		db.Close()
		return nil, fmt.Errorf("%s: schema version %d, and this copy knows version %d", path, v, SQLiteSchema)
	}
	return db, nil
}
