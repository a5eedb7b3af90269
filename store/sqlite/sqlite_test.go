package sqlite_test

import (
	"context"
	"errors"
	"testing"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

func TestConnectorsRoundTripAndSurviveReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	cs := st.Connectors()
	rec := store.Connector{ID: "web", Type: "http", Config: []byte(`{"base_url":"http://127.0.0.1:1"}`), Credentials: []byte(`{"token":{"env":"T"}}`)}
	if err := cs.Create(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := cs.Create(ctx, rec); !errors.Is(err, store.ErrExists) {
		t.Fatalf("duplicate create: %v, want ErrExists", err)
	}
	st.Close()

	st, err = sqlite.Open(ctx, dir) // migrations are idempotent
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, err := st.SchemaVersion(ctx); err != nil || v < 1 {
		t.Fatalf("schema version %d, %v", v, err)
	}
	got, err := st.Connectors().Get(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	if got.Type != "http" || string(got.Config) != string(rec.Config) || string(got.Credentials) != string(rec.Credentials) || got.CreatedAt.IsZero() {
		t.Fatalf("got %+v", got)
	}
	list, err := st.Connectors().List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("list = %v, %v", list, err)
	}
	if err := st.Connectors().Delete(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	if err := st.Connectors().Delete(ctx, "web"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v, want ErrNotFound", err)
	}
	if _, err := st.Connectors().Get(ctx, "web"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
}

// Processes that open a new state directory at the same moment (a
// server and a CLI command, two CLI commands) each see the schema
// migrated once: none applies a migration another has applied.
func TestConcurrentOpensMigrateOnce(t *testing.T) {
	ctx := context.Background()
	for range 20 {
		dir := t.TempDir()
		errs := make(chan error, 6)
		for range cap(errs) {
			go func() {
				st, err := sqlite.Open(ctx, dir)
				if err == nil {
					err = st.Close()
				}
				errs <- err
			}()
		}
		for range cap(errs) {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
}
