package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/legate-mcp/legate/store/postgres"
	"github.com/legate-mcp/legate/store/postgres/pgtest"
)

// Replicas starting together migrate once: each migration is applied by
// one of them, under the advisory lock, and all of them open.
func TestMigrationsRunOnceUnderTheLock(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			st, err := postgres.Open(ctx, url)
			if err == nil {
				st.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var rows, top int
	if err := st.DB().QueryRowContext(ctx, `SELECT COUNT(*), MAX(version) FROM schema_migrations`).Scan(&rows, &top); err != nil {
		t.Fatal(err)
	}
	if rows != postgres.Migrations() || top != postgres.Migrations() {
		t.Fatalf("schema_migrations holds %d rows up to %d, want each of the %d migrations once", rows, top, postgres.Migrations())
	}
	if v, err := st.SchemaVersion(ctx); err != nil || v != postgres.Migrations() {
		t.Fatalf("schema version %d %v", v, err)
	}
}

// A binary older than the database refuses to write to it.
func TestNewerSchemaIsRefused(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().ExecContext(ctx, `INSERT INTO schema_migrations VALUES ($1, 0)`, postgres.Migrations()+1); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := postgres.Open(ctx, url); err == nil || !strings.Contains(err.Error(), "upgrade legate") {
		t.Fatalf("opening a newer schema: %v, want a refusal saying to upgrade", err)
	}
}

// A database never migrated is at version 0; Connect does not migrate it.
func TestConnectDoesNotMigrate(t *testing.T) {
	ctx := context.Background()
	st, err := postgres.Connect(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, err := st.SchemaVersion(ctx); err != nil || v != 0 {
		t.Fatalf("version %d %v, want 0", v, err)
	}
}

// An error leaving the store never holds the URL's password.
func TestErrorsHideThePassword(t *testing.T) {
	for name, url := range map[string]string{
		"in the user info": "postgres://legate:hunter2-secret@127.0.0.1:1/legate?connect_timeout=1",
		"as a parameter":   "postgres://legate@127.0.0.1:1/legate?password=hunter2-secret&connect_timeout=1",
		"unparsable":       "postgres://legate:hunter2-secret@127.0.0.1:port/legate",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := postgres.Open(context.Background(), url)
			if err == nil {
				t.Fatal("opened a server that is not there")
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("error shows the password: %v", err)
			}
		})
	}
	if got := postgres.Redacted("postgres://u:hunter2@h/db"); strings.Contains(got, "hunter2") {
		t.Fatalf("Redacted: %s", got)
	}
}
