package migrate

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/legate-mcp/legate/store/postgres"
	"github.com/legate-mcp/legate/store/postgres/pgtest"
	"github.com/legate-mcp/legate/store/sqlite"
)

// TestMain runs the tests of both test packages; some use PostgreSQL.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// planColumns is every table of the plan with its columns, sorted.
func planColumns() map[string][]string {
	out := map[string][]string{}
	for _, t := range plan {
		for _, c := range t.cols {
			out[t.name] = append(out[t.name], c.name)
		}
		slices.Sort(out[t.name])
	}
	return out
}

// notCopied are the tables of the state the copy does not move row by row:
// each store's own bookkeeping (the cache version is carried past both).
var notCopied = []string{"schema_migrations", "cache_version", "sqlite_sequence", "imports"}

// The plan moves every column of every table the embedded store has, and
// each exists in the PostgreSQL store: a migration added to either without
// the plan fails here.
func TestPlanCoversBothSchemas(t *testing.T) {
	ctx := context.Background()
	want := planColumns()

	path := filepath.Join(t.TempDir(), "legate.db")
	st, err := sqlite.OpenFile(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, err := st.SchemaVersion(ctx); err != nil || v != SQLiteSchema {
		t.Fatalf("the embedded store is at schema %d (%v); the plan copies %d: extend the plan and SQLiteSchema", v, err, SQLiteSchema)
	}
	lite, err := openSQLite(ctx, path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	got := map[string][]string{}
	rows, err := lite.QueryContext(ctx, `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var tbl, col string
		if err := rows.Scan(&tbl, &col); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(notCopied, tbl) {
			got[tbl] = append(got[tbl], col)
		}
	}
	rows.Close()
	compare(t, "the embedded store", got, want)

	pg, err := postgres.Open(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	got = map[string][]string{}
	prows, err := pg.DB().QueryContext(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	for prows.Next() {
		var tbl, col string
		if err := prows.Scan(&tbl, &col); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(notCopied, tbl) {
			got[tbl] = append(got[tbl], col)
		}
	}
	prows.Close()
	compare(t, "the PostgreSQL store", got, want)
}

func compare(t *testing.T, what string, got, want map[string][]string) {
	t.Helper()
	for tbl, cols := range got {
		if !slices.Equal(cols, want[tbl]) {
			t.Errorf("%s: table %s has columns %q; the plan copies %q", what, tbl, cols, want[tbl])
		}
	}
	for tbl := range want {
		if _, ok := got[tbl]; !ok {
			t.Errorf("%s has no table %s, which the plan copies", what, tbl)
		}
	}
}
