package all_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/legate-mcp/legate/store"
	_ "github.com/legate-mcp/legate/store/all" // every backend registers its URL scheme
)

// A store is opened by URL: a path (or sqlite://PATH) is the embedded
// SQLite store, postgres://… the store replicas share. Opening migrates
// the schema forward; the same interfaces then work on either.
func Example() {
	dir, err := os.MkdirTemp("", "legate-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	st, err := store.Open(ctx, filepath.Join(dir, "legate.db"))
	if err != nil {
		panic(err)
	}
	defer st.Close()
	err = st.Connectors().Create(ctx, store.Connector{ID: "web", Type: "http", Config: []byte(`{"base_url":"https://api.example.com"}`)})
	if err != nil {
		panic(err)
	}
	c, err := st.Connectors().Get(ctx, "web")
	if err != nil {
		panic(err)
	}
	fmt.Println(c.ID, c.Type, string(c.Config))
	// Output: web http {"base_url":"https://api.example.com"}
}
