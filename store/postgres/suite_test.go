package postgres_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/store"
	_ "github.com/legate-mcp/legate/store/postgres"
	"github.com/legate-mcp/legate/store/postgres/pgtest"
	"github.com/legate-mcp/legate/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// open opens a store by URL, as the CLI does, closed at cleanup.
func open(t *testing.T, url string) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// The PostgreSQL store passes the suite the embedded one does, each test
// on a schema of its own.
func TestSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, pgtest.URL(t)) })
}

// Two stores on one database, as two replicas: one winner of every race.
func TestSharedSuite(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T, n int) []store.Store {
		url := pgtest.URL(t)
		var out []store.Store
		for range n {
			out = append(out, open(t, url))
		}
		return out
	})
}

// Both schemes libpq knows open the store.
func TestBothSchemes(t *testing.T) {
	url := pgtest.URL(t)
	long := "postgresql" + strings.TrimPrefix(url, "postgres")
	st := open(t, long)
	if _, err := st.Upstreams().CacheVersion(context.Background()); err != nil {
		t.Fatal(err)
	}
}
