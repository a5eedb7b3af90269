package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/legate-mcp/legate/store"
)

// Scheme is the store URL scheme of this backend: sqlite://PATH opens the
// database file at PATH (sqlite:///var/lib/legate/legate.db, or a path
// relative to the working directory), sqlite://:memory: a private
// in-memory store.
const Scheme = "sqlite"

// memory is the path of a private in-memory store, as SQLite names it.
const memory = ":memory:"

func init() { store.Register(Scheme, openURL) }

// openURL is the store.Opener of Scheme.
func openURL(ctx context.Context, url string) (store.Store, error) {
	_, path, ok := strings.Cut(url, "://")
	if !ok || path == "" {
		return nil, fmt.Errorf("store url %q: want %s://PATH or %s://%s", url, Scheme, Scheme, memory)
	}
	var st *Store
	var err error
	if path == memory {
		st, err = OpenMemory(ctx)
	} else {
		st, err = OpenFile(ctx, path)
	}
	if err != nil {
		return nil, err // not a nil *Store in a non-nil interface
	}
	return st, nil
}
