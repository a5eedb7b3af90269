package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/legate-mcp/legate/store/sqlite"
)

// A taken key is known by SQLite's result code, not by the words of its
// message: a primary or unique key is a duplicate, another constraint is
// not, and an error that only says so in words is not either.
func TestDuplicateIsTheResultCode(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	db := st.DB()
	exec := func(q string) error {
		t.Helper()
		_, err := db.ExecContext(ctx, q)
		if err == nil {
			t.Fatalf("%s: no error", q)
		}
		return err
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO connectors (id, type, created_at) VALUES ('web', 'http', 0)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO tokens (name, hash, tenant, role, profile, created_at) VALUES ('bob', 'h', '', 'user', '', 0)`); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		err  func() error
		want bool
	}{
		"primary key": {func() error {
			return exec(`INSERT INTO connectors (id, type, created_at) VALUES ('web', 'http', 0)`)
		}, true},
		"unique column": {func() error {
			return exec(`INSERT INTO tokens (name, hash, tenant, role, profile, created_at) VALUES ('carol', 'h', '', 'user', '', 0)`)
		}, true},
		"wrapped": {func() error {
			return fmt.Errorf("storing: %w", exec(`INSERT INTO connectors (id, type, created_at) VALUES ('web', 'http', 0)`))
		}, true},
		"not null": {func() error {
			return exec(`INSERT INTO connectors (id, type, created_at) VALUES ('other', NULL, 0)`)
		}, false},
		"check": {func() error {
			return exec(`INSERT INTO cache_version VALUES (2, 0)`)
		}, false},
		"the words alone": {func() error {
			return errors.New("UNIQUE constraint failed: connectors.id")
		}, false},
		"no error": {func() error { return nil }, false},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.err()
			if got := sqlite.Duplicate(err); got != tc.want {
				t.Fatalf("Duplicate(%v) = %v, want %v", err, got, tc.want)
			}
		})
	}
}
