package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

// sqlite://PATH and a plain PATH open the file Open(dir) opens, creating
// its directory as Open does.
func TestURLOpensTheStateFile(t *testing.T) {
	ctx := context.Background()
	if !slices.Contains(store.Schemes(), sqlite.Scheme) {
		t.Fatalf("schemes %q lack %s", store.Schemes(), sqlite.Scheme)
	}
	dir := filepath.Join(t.TempDir(), "state")
	st, err := sqlite.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Connectors().Create(ctx, store.Connector{ID: "web", Type: "http"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	path := filepath.Join(dir, sqlite.FileName)
	for name, url := range map[string]string{
		"url":        "sqlite://" + path,
		"plain path": path,
	} {
		t.Run(name, func(t *testing.T) {
			st, err := store.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if _, err := st.Connectors().Get(ctx, "web"); err != nil {
				t.Fatalf("the instance stored through Open(dir): %v", err)
			}
		})
	}

	nested := filepath.Join(t.TempDir(), "a", "b", "legate.db")
	st2, err := store.Open(ctx, "sqlite://"+nested)
	if err != nil {
		t.Fatal(err)
	}
	st2.Close()
	if fi, err := os.Stat(filepath.Dir(nested)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("directory made: %v %v, want mode 0700", fi, err)
	}
}

func TestURLWithoutAPathIsAnError(t *testing.T) {
	for name, url := range map[string]string{
		"no path":    "sqlite://",
		"no slashes": "sqlite:legate.db",
	} {
		t.Run(name, func(t *testing.T) {
			st, err := store.Open(context.Background(), url)
			if err == nil || st != nil || !strings.Contains(err.Error(), "sqlite://PATH") {
				t.Fatalf("open %q: %v, %v; want an error showing the form", url, st, err)
			}
		})
	}
}
