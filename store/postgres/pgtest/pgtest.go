// Package pgtest gives tests a PostgreSQL database of their own. A test
// binary that uses it creates one database, on first use, and drops it when
// its tests end; each test gets an empty schema in it, dropped at the
// test's cleanup, and a store URL whose search_path names that schema:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
//	func TestX(t *testing.T) {
//		st, err := postgres.Open(ctx, pgtest.URL(t))
//		...
//
// The server is the one EnvURL names (default DefaultURL), by a user
// allowed to create databases. Without a server, the tests that need one
// skip and say how to provide one, except under CI=true, where they fail.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvURL names the variable holding the URL of the server tests use.
const EnvURL = "LEGATE_TEST_POSTGRES_URL"

// DefaultURL is the server tests use when EnvURL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres"

var (
	inMain  atomic.Bool
	once    sync.Once
	db      string        // the database's name
	dbURL   string        // its URL
	pool    *pgxpool.Pool // on it, to make and drop schemas
	openErr error
	schemas atomic.Int64
)

// Main runs the tests of m (a *testing.M, or a TestMain's own steps around
// it) and then drops the database they used; a package's TestMain returns
// its result to os.Exit.
func Main(m interface{ Run() int }) int {
	inMain.Store(true)
	code := m.Run()
	if pool != nil {
		pool.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := admin(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)"); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: dropping database %s: %v\n", db, err)
			return max(code, 1)
		}
	}
	return code
}

// ServerURL is the server's URL: EnvURL's value or DefaultURL.
func ServerURL() string {
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	return DefaultURL
}

// URL returns the store URL of an empty schema of t's own, dropped at its
// cleanup. It skips t (fails it under CI=true) when there is no server.
func URL(t testing.TB) string {
	t.Helper()
	if !inMain.Load() {
		t.Fatal("pgtest: the package's TestMain must run the tests through pgtest.Main, which drops the test database")
	}
	once.Do(create)
	if openErr != nil {
		msg := fmt.Sprintf("postgres: %v: start PostgreSQL on 127.0.0.1:5432 or set %s to a server where this user may create databases", openErr, EnvURL)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " (CI=true: a missing database is a failure)")
		}
		t.Skip(msg)
	}
	schema := fmt.Sprintf("t%d", schemas.Add(1))
	ctx := context.Background()
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("pgtest: creating schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("pgtest: dropping schema %s: %v", schema, err)
		}
	})
	return withParam(dbURL, "search_path", schema)
}

// create makes the test binary's database.
func create() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := make([]byte, 4)
	rand.Read(b)
	db = fmt.Sprintf("legate_test_%d_%s", os.Getpid(), hex.EncodeToString(b))
	if openErr = admin(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); openErr != nil {
		return
	}
	u, err := url.Parse(ServerURL())
	if err != nil {
		openErr = err
		return
	}
	u.Path = "/" + db
	dbURL = u.String()
	pool, openErr = pgxpool.New(ctx, dbURL)
}

// admin runs one statement on the server's URL.
func admin(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// withParam sets one query parameter of a URL.
func withParam(raw, name, value string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	q.Set(name, value)
	u.RawQuery = q.Encode()
	return u.String()
}
