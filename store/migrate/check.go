package migrate

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/legate-mcp/legate/store/postgres"
)

// Status is what Check found.
type Status struct {
	// Store is the store's URL, its password masked.
	Store   string `json:"store"`
	Backend string `json:"backend"`
	// Version is the schema version applied; Known, the one this binary
	// brings a store to; Pending, the migrations its next start applies.
	Version int          `json:"schema_version"`
	Known   int          `json:"known_version"`
	Pending int          `json:"pending_migrations"`
	Tables  []TableCount `json:"tables"`
}

// Check connects to the store url names (sqlite:// or postgres://) and
// reports its schema version, the migrations pending and its row counts.
// It changes nothing: it neither creates nor migrates a store.
func Check(ctx context.Context, url string) (*Status, error) {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		scheme, rest = "sqlite", url
	}
	switch strings.ToLower(scheme) {
	case "sqlite":
		db, err := openSQLite(ctx, rest, false)
		if err != nil {
			return nil, err
		}
		defer db.Close()
		var v int
		if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
			return nil, err
		}
		return status(ctx, "sqlite://"+rest, "sqlite", v, SQLiteSchema, dbCounter(db))
	case postgres.Scheme, postgres.SchemeLong:
		st, err := postgres.Connect(ctx, url)
		if err != nil {
			return nil, err
		}
		defer st.Close()
		v, err := st.SchemaVersion(ctx)
		if err != nil {
			return nil, err
		}
		return status(ctx, postgres.Redacted(url), "postgres", v, postgres.Migrations(), dbCounter(st.DB()))
	}
	return nil, fmt.Errorf("store url %q: store check knows sqlite:// and postgres:// stores", url)
}

func status(ctx context.Context, url, backend string, v, known int, count counter) (*Status, error) {
	s := &Status{Store: url, Backend: backend, Version: v, Known: known, Pending: max(known-v, 0)}
	if v == 0 {
		return s, nil // no tables yet
	}
	var err error
	s.Tables, err = counts(ctx, count)
	return s, err
}

// counter counts the rows of one table.
type counter func(ctx context.Context, table string) (int64, error)

func dbCounter(db *sql.DB) counter {
	return func(ctx context.Context, table string) (int64, error) {
		var n int64
		err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+table).Scan(&n)
		return n, err
	}
}

// counts counts the rows of every table of the plan.
func counts(ctx context.Context, count counter) ([]TableCount, error) {
	var out []TableCount
	for _, t := range plan {
		n, err := count(ctx, t.name)
		if err != nil {
			return nil, fmt.Errorf("counting %s: %w", t.what, err)
		}
		out = append(out, TableCount{Table: t.name, What: t.what, Rows: n})
	}
	return out, nil
}
