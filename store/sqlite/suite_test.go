package sqlite_test

import (
	"context"
	"testing"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/store/storetest"
)

// The embedded store passes the suite on a file and in memory.
func TestSuite(t *testing.T) {
	for name, open := range map[string]func(ctx context.Context, t *testing.T) (*sqlite.Store, error){
		"file":   func(ctx context.Context, t *testing.T) (*sqlite.Store, error) { return sqlite.Open(ctx, t.TempDir()) },
		"memory": func(ctx context.Context, _ *testing.T) (*sqlite.Store, error) { return sqlite.OpenMemory(ctx) },
	} {
		t.Run(name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) store.Store {
				st, err := open(context.Background(), t)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			})
		})
	}
}
