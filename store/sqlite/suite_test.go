package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/legate-mcp/legate/store"
	_ "github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/store/storetest"
)

// The embedded store passes the suite on a file and in memory, opened by
// URL as the CLI opens it.
func TestSuite(t *testing.T) {
	for name, url := range map[string]func(t *testing.T) string{
		"file":   func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "legate.db") },
		"memory": func(*testing.T) string { return "sqlite://:memory:" },
	} {
		t.Run(name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) store.Store {
				st, err := store.Open(context.Background(), url(t))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			})
		})
	}
}

// Two stores on one file, as two processes on one machine (serve and the
// CLI): one winner of every race.
func TestSharedSuite(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T, n int) []store.Store {
		url := "sqlite://" + filepath.Join(t.TempDir(), "legate.db")
		var out []store.Store
		for range n {
			st, err := store.Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			out = append(out, st)
		}
		return out
	})
}
