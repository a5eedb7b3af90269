package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	_ "github.com/legate-mcp/legate/connectors/postgres"
	"github.com/legate-mcp/legate/connectors/sqlbase"
	"github.com/legate-mcp/legate/connectors/sqlbase/sqltest"
)

const urlEnv = "LEGATE_TEST_POSTGRES_URL"

func TestContract(t *testing.T) {
	sample, err := os.ReadFile("sample.yaml")
	if err != nil {
		t.Fatal(err)
	}
	connectortest.Run(t, connectortest.Case{Type: "postgres", Config: string(sample), Credentials: map[string]string{"password": "x"}})
}

// fixture is a database of its own on the test server, dropped at the end.
type fixture struct {
	admin *pgx.Conn // superuser, on the fixture's database
	db    string
	host  string
	port  string
	user  string
}

// slowSQL runs for minutes and is cheap to plan: a plan of high estimated
// cost is JIT-compiled first, where the server does not look at
// statement_timeout (seconds on a loaded machine), so a costly one would
// time out on the client before the server.
const slowSQL = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 100000000) SELECT count(*) FROM r"

func setup(t testing.TB) *fixture {
	t.Helper()
	raw := sqltest.Env(urlEnv, "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	ctx := context.Background()
	root, err := pgx.Connect(ctx, raw)
	if err != nil {
		sqltest.Unavailable(t, "PostgreSQL", urlEnv, err)
	}
	t.Cleanup(func() { root.Close(ctx) })
	f := &fixture{db: "legate_t_" + randHex()}
	if _, err := root.Exec(ctx, "CREATE DATABASE "+f.db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		root.Exec(ctx, "DROP DATABASE IF EXISTS "+f.db+" WITH (FORCE)")
	})
	u, _ := url.Parse(raw)
	u.Path = "/" + f.db
	if f.admin, err = pgx.Connect(ctx, u.String()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.admin.Close(ctx) })
	f.host, f.port, f.user = u.Hostname(), u.Port(), u.User.Username()
	if f.port == "" {
		f.port = "5432"
	}
	f.exec(t, `CREATE TABLE legate_canary (id serial PRIMARY KEY, v text NOT NULL);
		INSERT INTO legate_canary (v) SELECT 'row ' || g FROM generate_series(1, 250) g;`)
	return f
}

func (f *fixture) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	if _, err := f.admin.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// connector builds an instance on the fixture's database as user (the
// superuser when empty), with extra config lines.
func (f *fixture) connector(t testing.TB, user, extra string) connectors.Connector {
	t.Helper()
	if user == "" {
		user = f.user
	}
	c := connectortest.Build(t, "postgres", "pg", fmt.Sprintf("host: %s\nport: %s\ndatabase: %s\nuser: %s\nsslmode: disable\n%s",
		f.host, f.port, f.db, user, extra))
	t.Cleanup(func() { c.(connectors.Closer).Close() })
	return c
}

// state is what a bypass must never change: the canary's rows, its
// sequence, the tables of the database, large objects.
func (f *fixture) state(t testing.TB) string {
	t.Helper()
	var s string
	err := f.admin.QueryRow(context.Background(), `SELECT concat_ws('|',
		(SELECT md5(string_agg(id || ':' || v, ',' ORDER BY id)) FROM legate_canary),
		(SELECT last_value || '/' || is_called FROM legate_canary_id_seq),
		(SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class WHERE relnamespace = 'public'::regnamespace),
		(SELECT count(*) FROM pg_largeobject_metadata))`).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func randHex() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func decode[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return v
}

type queryResult struct {
	Columns []struct{ Name, Type string }
	Rows    [][]any
	Count   int    `json:"row_count"`
	More    bool   `json:"truncated"`
	Next    string `json:"next_cursor"`
}

func TestQueryTypedRows(t *testing.T) {
	f := setup(t)
	f.exec(t, `CREATE TABLE typed (i int, b bigint, n numeric(20,4), r real, d double precision, t text, ts timestamptz,
		dt date, by bytea, ok boolean, j jsonb, u uuid, nul text)`)
	f.exec(t, `INSERT INTO typed VALUES (42, 9007199254740993, 12345678901234.5678, 1.5, 'NaN', 'héllo',
		'2026-11-30 12:34:56.789+00', '2026-11-30', '\x00ff10', true, '{"a": [1, 2]}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', NULL)`)
	c := f.connector(t, "", "")
	raw, err := sqltest.Call(t, c, "query", `{"sql": "SELECT * FROM typed WHERE i = $1", "params": [42]}`, "")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"columns":[{"name":"i","type":"int4"},{"name":"b","type":"int8"},{"name":"n","type":"numeric"},` +
		`{"name":"r","type":"float4"},{"name":"d","type":"float8"},{"name":"t","type":"text"},{"name":"ts","type":"timestamptz"},` +
		`{"name":"dt","type":"date"},{"name":"by","type":"bytea"},{"name":"ok","type":"bool"},{"name":"j","type":"jsonb"},` +
		`{"name":"u","type":"uuid"},{"name":"nul","type":"text"}],` +
		`"rows":[[42,9007199254740993,12345678901234.5678,1.5,"NaN","héllo","2026-11-30T12:34:56.789Z","2026-11-30","AP8Q",true,` +
		`{"a":[1,2]},"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",null]],"row_count":1,"truncated":false}`
	if string(raw) != want {
		t.Fatalf("got\n%s\nwant\n%s", raw, want)
	}
}

func TestQueryCapsAndPages(t *testing.T) {
	f := setup(t)
	c := f.connector(t, "", "default_rows: 100\nmax_rows: 120\n")
	raw, err := sqltest.Call(t, c, "query", `{"sql": "SELECT id, v FROM legate_canary ORDER BY id"}`, "")
	if err != nil {
		t.Fatal(err)
	}
	r := decode[queryResult](t, raw)
	if r.Count != 100 || len(r.Rows) != 100 || !r.More || r.Next != "" {
		t.Fatalf("default page: %d rows, truncated %v, cursor %q; want 100, true, none", r.Count, r.More, r.Next)
	}
	if _, err := sqltest.Call(t, c, "query", `{"sql": "SELECT 1", "limit": 121}`, ""); sqltest.Code(err) != legate.CodeInvalidArgument {
		t.Fatalf("limit over max_rows: %v", err)
	}
	// Keyset pages cover every row once, in order.
	args := `{"sql": "SELECT id, v FROM legate_canary WHERE id > $1", "params": [0], "keyset": ["id"], "limit": 120%s}`
	seen, cursor := 0, ""
	for page := 0; ; page++ {
		extra := ""
		if cursor != "" {
			extra = `, "cursor": "` + cursor + `"`
		}
		raw, err := sqltest.Call(t, c, "query", fmt.Sprintf(args, extra), "")
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		r := decode[queryResult](t, raw)
		for _, row := range r.Rows {
			seen++
			if id, _ := row[0].(json.Number).Int64(); id != int64(seen) {
				t.Fatalf("page %d: row id %d, want %d", page, id, seen)
			}
		}
		if r.Next == "" {
			break
		}
		cursor = r.Next
	}
	if seen != 250 {
		t.Fatalf("pages gave %d rows, want 250", seen)
	}
	// A cursor is bound to its statement and cannot be edited.
	_, err = sqltest.Call(t, c, "query", `{"sql": "SELECT id FROM legate_canary", "keyset": ["id"], "cursor": "`+cursor+`"}`, "")
	if sqltest.Code(err) != legate.CodeInvalidArgument {
		t.Fatalf("cursor of another statement: %v", err)
	}
	_, err = sqltest.Call(t, c, "query", fmt.Sprintf(args, `, "cursor": "`+cursor[:len(cursor)-2]+`xx"`), "")
	if sqltest.Code(err) != legate.CodeInvalidArgument {
		t.Fatalf("edited cursor: %v", err)
	}
}

func TestExecuteWritesOnce(t *testing.T) {
	f := setup(t)
	c := f.connector(t, "", "")
	insert := `{"sql": "INSERT INTO legate_canary (v) VALUES ($1)", "params": ["written"]}`
	raw, err := sqltest.Call(t, c, "execute", insert, "op-1")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(raw); got != `{"rows_affected":1,"operation_key":"op-1","replayed":false}` {
		t.Fatalf("first write: %s", got)
	}
	raw, err = sqltest.Call(t, c, "execute", insert, "op-1")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(raw); got != `{"rows_affected":1,"operation_key":"op-1","replayed":true}` {
		t.Fatalf("retried write: %s", got)
	}
	var n int
	f.admin.QueryRow(context.Background(), "SELECT count(*) FROM legate_canary WHERE v = 'written'").Scan(&n)
	if n != 1 {
		t.Fatalf("%d rows written, want 1", n)
	}
	other := `{"sql": "INSERT INTO legate_canary (v) VALUES ($1)", "params": ["other"]}`
	if _, err := sqltest.Call(t, c, "execute", other, "op-1"); sqltest.Code(err) != legate.CodeConflict {
		t.Fatalf("same key, other write: %v", err)
	}
	if _, err := sqltest.Call(t, c, "execute", `{"sql": "SELECT 1"}`, "op-2"); sqltest.Code(err) != legate.CodeInvalidArgument {
		t.Fatalf("a read through execute: %v", err)
	}
	for _, sql := range []string{`DELETE FROM legate_operations`, `UPDATE public."LEGATE_OPERATIONS" SET stmt_hash = ''`} {
		args, _ := json.Marshal(map[string]string{"sql": sql})
		if _, err := sqltest.Call(t, c, "execute", string(args), "op-erase"); sqltest.Code(err) != legate.CodeInvalidArgument {
			t.Fatalf("%s: %v, want INVALID_ARGUMENT", sql, err)
		}
	}
	// A write without arguments still goes over the extended protocol: a
	// chained second statement is refused by the server too.
	raw, err = sqltest.Call(t, c, "execute", `{"sql": "DELETE FROM legate_canary WHERE v = 'written'"}`, "op-3")
	if err != nil || !strings.Contains(string(raw), `"rows_affected":1`) {
		t.Fatalf("delete: %s %v", raw, err)
	}
}

func TestSchemaListsTables(t *testing.T) {
	f := setup(t)
	f.exec(t, "CREATE SCHEMA hidden; CREATE TABLE hidden.secret (x int); CREATE VIEW canary_view AS SELECT v FROM legate_canary")
	c := f.connector(t, "", "")
	raw, err := sqltest.Call(t, c, "schema", `{}`, "")
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	for _, want := range []string{`{"schema":"public","name":"legate_canary","kind":"table","columns":[{"name":"id","type":"integer","nullable":false},{"name":"v","type":"text","nullable":false}]}`,
		`"name":"canary_view","kind":"view"`} {
		if !strings.Contains(s, want) {
			t.Errorf("schema lacks %s:\n%s", want, s)
		}
	}
	if strings.Contains(s, "secret") {
		t.Errorf("schema lists a table outside the allowed schemas: %s", s)
	}
	if _, err := sqltest.Call(t, c, "schema", `{"schema": "hidden"}`, ""); sqltest.Code(err) != legate.CodeInvalidArgument {
		t.Errorf("schema outside the allowed ones: %v", err)
	}
}

func TestErrorsAreCanonical(t *testing.T) {
	f := setup(t)
	reader := "legate_r_" + randHex()
	f.exec(t, "CREATE ROLE "+reader+" LOGIN")
	t.Cleanup(func() {
		f.admin.Exec(context.Background(), "DROP OWNED BY "+reader)
		f.admin.Exec(context.Background(), "DROP ROLE "+reader)
	})
	f.exec(t, "REVOKE ALL ON legate_canary FROM PUBLIC")
	c := f.connector(t, "", "statement_timeout: 300ms\n")
	r := f.connector(t, reader, "")
	tests := map[string]struct {
		c         connectors.Connector
		tool, sql string
		code      legate.Code
		msg       string
	}{
		"syntax":            {c, "query", "SELECT FROM WHERE", legate.CodeInvalidArgument, "syntax error"},
		"unknown column":    {c, "query", "SELECT nope FROM legate_canary", legate.CodeInvalidArgument, `column "nope" does not exist`},
		"permission denied": {r, "query", "SELECT * FROM legate_canary", legate.CodePermissionDenied, "permission denied"},
		"write denied":      {r, "execute", "DELETE FROM legate_canary", legate.CodePermissionDenied, "legate_operations"},
		"timeout":           {c, "query", slowSQL, legate.CodeTransient, "57014"},
		"unique violation":  {c, "execute", "INSERT INTO legate_canary (id, v) VALUES (1, 'dup')", legate.CodeConflict, "23505"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := sqltest.Call(t, tc.c, tc.tool, fmt.Sprintf(`{"sql": %q}`, tc.sql), "op-"+name)
			if sqltest.Code(err) != tc.code || !strings.Contains(err.Error(), tc.msg) || !strings.HasPrefix(err.(*legate.Error).Message, "postgres: ") {
				t.Fatalf("got %v, want %s mentioning %q", err, tc.code, tc.msg)
			}
		})
	}
}

// TestBypassCorpus runs every bypass of the corpus through query, as a
// superuser and as a role granted only SELECT: each gives its expected
// outcome, and the canary, the database's tables, sequences and large
// objects, and the file system stay as they were.
func TestBypassCorpus(t *testing.T) {
	f := setup(t)
	f.extensions(t, "dblink", "tablefunc", "xml2")
	role := "legate_sel_" + randHex()
	t.Cleanup(func() {
		f.admin.Exec(context.Background(), "DROP OWNED BY "+role)
		f.admin.Exec(context.Background(), "DROP ROLE IF EXISTS "+role)
	})
	f.exec(t, "CREATE ROLE "+role+" LOGIN")
	f.exec(t, "GRANT SELECT ON ALL TABLES IN SCHEMA public TO "+role)
	before := f.state(t)
	dir := t.TempDir()
	for _, user := range []string{"", role} {
		// The superuser's instance is read_only with the override: the
		// guard alone stands between its queries and the server.
		c := f.connector(t, user, "statement_timeout: 500ms\nread_only: true\nallow_privileged_role: true\n")
		name := map[bool]string{true: "superuser", false: "select-only"}[user == ""]
		for i, bc := range sqltest.Bypasses(sqlbaseDialect) {
			t.Run(name+"/"+bc.Name, func(t *testing.T) {
				file := fmt.Sprintf("%s/bypass-%s-%d", dir, name, i)
				sql := sqltest.Fill(bc.SQL, "legate_canary", file)
				args, _ := json.Marshal(map[string]string{"sql": sql})
				_, err := sqltest.Call(t, c, "query", string(args), "")
				checkOutcome(t, bc.Outcome, err)
				if _, statErr := os.Stat(file); statErr == nil {
					t.Errorf("%q created %s", sql, file)
				}
				if after := f.state(t); after != before {
					t.Fatalf("%q changed the database:\n before %s\n after  %s", sql, before, after)
				}
			})
		}
	}
}

// extensions creates the extensions in the fixture's database: those whose
// functions the corpus calls, so that a bypass the guard missed would
// reach them. Missing ones (postgresql-contrib) fail under CI=true, where
// .ci/run installs them, and are reported elsewhere; the corpus still
// runs, every case refused by the guard either way.
func (f *fixture) extensions(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := f.admin.Exec(context.Background(), "CREATE EXTENSION IF NOT EXISTS "+n); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("extension %s: %v (install postgresql-contrib)", n, err)
			}
			t.Logf("extension %s is not available (%v): its corpus cases are refused by the guard but cannot show their harm here", n, err)
		}
	}
}

func checkOutcome(t *testing.T, want sqltest.Outcome, err error) {
	t.Helper()
	guard := err != nil && strings.Contains(err.Error(), "sql guard")
	switch {
	case want == sqltest.Refused && (!guard || sqltest.Code(err) != legate.CodeInvalidArgument):
		t.Errorf("want a refusal by the guard, got %v", err)
	case want == sqltest.Read && err != nil:
		t.Errorf("want a harmless read, got %v", err)
	case want == sqltest.Failed && (err == nil || guard):
		t.Errorf("want the server to refuse or stop it, got %v", err)
	}
	var le *legate.Error
	if err != nil && !errorsAs(err, &le) {
		t.Errorf("not a canonical error: %v", err)
	}
}

// TestGuardReplay runs every seed and saved fuzz input that the guard
// accepts as a read through query as a superuser: nothing may change.
func TestGuardReplay(t *testing.T) {
	f := setup(t)
	c := f.connector(t, "", "statement_timeout: 500ms\n")
	before := f.state(t)
	inputs := sqltest.Seeds()
	for _, in := range sqltest.FuzzInputs(t) {
		inputs = append(inputs, in.SQL)
	}
	ran := 0
	for _, sql := range inputs {
		if _, err := checkRead(sql); err != nil {
			continue
		}
		ran++
		args, _ := json.Marshal(map[string]string{"sql": sql})
		sqltest.Call(t, c, "query", string(args), "")
		if after := f.state(t); after != before {
			t.Fatalf("%q changed the database:\n before %s\n after  %s", sql, before, after)
		}
	}
	if ran == 0 {
		t.Fatal("no input was accepted: the replay tested nothing")
	}
	t.Logf("%d of %d inputs accepted and run", ran, len(inputs))
}

// TestLayersBelowTheGuard sends statements the guard refuses straight to
// the backend, as a superuser: the one-statement protocol and the READ
// ONLY transaction stop each of them on their own.
func TestLayersBelowTheGuard(t *testing.T) {
	f := setup(t)
	c := f.connector(t, "", "statement_timeout: 500ms\n")
	b := c.(sqlbase.Backend)
	before := f.state(t)
	for _, sql := range []string{
		"BEGIN READ ONLY; SELECT 1; COMMIT; INSERT INTO legate_canary (v) VALUES ('x')",
		"COMMIT; INSERT INTO legate_canary (v) VALUES ('x')",
		"SELECT 1; DELETE FROM legate_canary",
		"INSERT INTO legate_canary (v) VALUES ('x')",
		"WITH d AS (DELETE FROM legate_canary RETURNING *) SELECT count(*) FROM d",
		"SELECT * INTO legate_pwned FROM legate_canary",
		"SELECT nextval('legate_canary_id_seq')",
		"SELECT set_config('transaction_read_only', 'off', true)",
		"CREATE TEMP TABLE t AS SELECT 1",
		"DO $$BEGIN DELETE FROM legate_canary; END$$",
		"SELECT * FROM legate_canary FOR UPDATE",
	} {
		_, err := b.Read(context.Background(), nil, &sqlbase.ReadRequest{SQL: sql, Max: 10, Timeout: time.Second, Schemas: []string{"public"}})
		if err == nil {
			t.Errorf("%q: ran", sql)
		}
		if after := f.state(t); after != before {
			t.Fatalf("%q changed the database:\n before %s\n after  %s", sql, before, after)
		}
	}
}

// TestReadOnlyRole gives a role the README's read-only grants and shows
// that the role alone, with no guard and no READ ONLY transaction in
// front of it, refuses what the guard refuses; and that a read_only
// instance offers no execute.
func TestReadOnlyRole(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	role := "legate_ro_" + randHex()
	t.Cleanup(func() {
		f.admin.Exec(ctx, "DROP OWNED BY "+role)
		f.admin.Exec(ctx, "DROP ROLE IF EXISTS "+role)
	})
	for _, g := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"GRANT CONNECT ON DATABASE " + f.db + " TO " + role,
		"GRANT USAGE ON SCHEMA public TO " + role,
		"GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + role,
		"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO " + role,
		"ALTER ROLE " + role + " SET default_transaction_read_only = on",
	} {
		f.exec(t, g)
	}
	c := f.connector(t, role, "read_only: true\n")
	for _, tool := range c.Tools() {
		if tool.Name == "execute" {
			t.Fatal("a read_only instance offers execute")
		}
	}
	raw, err := sqltest.Call(t, c, "query", `{"sql": "SELECT count(*) AS n FROM legate_canary"}`, "")
	if err != nil || !strings.Contains(string(raw), `"rows":[[250]]`) {
		t.Fatalf("query as the read-only role: %s %v", raw, err)
	}
	cfg := f.admin.Config().Copy()
	cfg.User = role
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	before := f.state(t)
	file := t.TempDir() + "/role-bypass"
	for _, sql := range []string{
		"SET default_transaction_read_only = off; INSERT INTO legate_canary (v) VALUES ('x')",
		"SET default_transaction_read_only = off; DELETE FROM legate_canary",
		"SET default_transaction_read_only = off; SELECT nextval('legate_canary_id_seq')",
		"COPY (SELECT 1) TO PROGRAM 'touch " + file + "'",
		"SELECT pg_read_file('/etc/passwd')",
		"SELECT lo_export(lo_from_bytea(0, 'x'::bytea), '" + file + "')",
		"SET default_transaction_read_only = off; CREATE TABLE legate_pwned (x int)",
	} {
		if _, err := conn.Exec(ctx, sql); err == nil {
			t.Errorf("the read-only role ran %q", sql)
		}
		conn.Exec(ctx, "RESET default_transaction_read_only")
	}
	if _, err := os.Stat(file); err == nil {
		t.Errorf("%s was created", file)
	}
	if after := f.state(t); after != before {
		t.Fatalf("the read-only role changed the database:\n before %s\n after  %s", before, after)
	}
}

func TestConnectionTest(t *testing.T) {
	f := setup(t)
	if err := f.connector(t, "", "").Test(context.Background(), connectortest.Creds{}); err != nil {
		t.Fatalf("Test: %v", err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	c := connectortest.Build(t, "postgres", "pg", fmt.Sprintf("port: %d\ndatabase: x\nuser: x\nsslmode: disable\nconnect_timeout: 1s\n", port))
	defer c.(connectors.Closer).Close()
	if err := c.Test(context.Background(), connectortest.Creds{}); sqltest.Code(err) != legate.CodeTransient {
		t.Fatalf("Test of a closed port: %v, want TRANSIENT", err)
	}
	if err := f.connector(t, "no_such_role_"+randHex(), "").Test(context.Background(), connectortest.Creds{"password": "x"}); sqltest.Code(err) != legate.CodeAuthExpired {
		t.Fatalf("Test as an unknown role: %v, want AUTH_EXPIRED", err)
	}
}

// TestExecuteConcurrentRetries sends the same write with the same
// operation key from several callers at once: one writes, the others wait
// for it and replay its outcome.
func TestExecuteConcurrentRetries(t *testing.T) {
	f := setup(t)
	c := f.connector(t, "", "max_conns: 8\n")
	const n = 6
	results := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			raw, err := sqltest.Call(t, c, "execute", `{"sql": "INSERT INTO legate_canary (v) VALUES ('concurrent')"}`, "op-same")
			results[i], errs[i] = string(raw), err
		})
	}
	wg.Wait()
	fresh := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if strings.Contains(results[i], `"replayed":false`) {
			fresh++
		}
	}
	var rows int
	f.admin.QueryRow(context.Background(), "SELECT count(*) FROM legate_canary WHERE v = 'concurrent'").Scan(&rows)
	if rows != 1 || fresh != 1 {
		t.Fatalf("%d rows written, %d calls not replayed; want 1 and 1: %q", rows, fresh, results)
	}
}

// TestParamsMustMatch: a statement's parameters and params must agree.
func TestParamsMustMatch(t *testing.T) {
	f := setup(t)
	c := f.connector(t, "", "")
	for _, args := range []string{
		`{"sql": "SELECT id FROM legate_canary WHERE id > $2", "params": [1]}`,
		`{"sql": "SELECT id FROM legate_canary WHERE id > $1", "params": [1, 2]}`,
		`{"sql": "SELECT id FROM legate_canary WHERE id > $1"}`,
	} {
		if _, err := sqltest.Call(t, c, "query", args, ""); sqltest.Code(err) != legate.CodeInvalidArgument {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", args, err)
		}
	}
}

// TestKeysetOfTypedColumns pages on numeric, timestamptz and text keys:
// the cursor binds each value again as its own type.
func TestKeysetOfTypedColumns(t *testing.T) {
	f := setup(t)
	f.exec(t, `CREATE TABLE ledger AS SELECT g AS id, (g % 7) * 1.25 AS amount,
		'2026-01-01T00:00:00Z'::timestamptz + (g % 5) * interval '1.5 second' AS at, 'k' || (g % 3) AS k
		FROM generate_series(1, 95) g`)
	c := f.connector(t, "", "")
	args := `{"sql": "SELECT amount, at, k, id FROM ledger", "keyset": ["amount", "at", "k", "id"], "limit": 10%s}`
	seen, cursor := map[string]bool{}, ""
	for page := 0; page < 20; page++ {
		extra := ""
		if cursor != "" {
			extra = `, "cursor": "` + cursor + `"`
		}
		raw, err := sqltest.Call(t, c, "query", fmt.Sprintf(args, extra), "")
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		r := decode[queryResult](t, raw)
		for _, row := range r.Rows {
			id := row[3].(json.Number).String()
			if seen[id] {
				t.Fatalf("page %d: row %s again", page, id)
			}
			seen[id] = true
		}
		if cursor = r.Next; cursor == "" {
			break
		}
	}
	if len(seen) != 95 {
		t.Fatalf("pages gave %d distinct rows, want 95", len(seen))
	}
}

// TestResultBytesCut: a page stops before the row that would pass
// max_result_bytes, marked truncated, and its cursor continues after the
// last row given; a row alone past it is refused.
func TestResultBytesCut(t *testing.T) {
	f := setup(t)
	c := f.connector(t, "", "max_result_bytes: 2048\n")
	args := `{"sql": "SELECT id, repeat('x', 200) AS pad FROM legate_canary", "keyset": ["id"], "limit": 50%s}`
	seen, cursor := 0, ""
	for page := 0; page < 100; page++ {
		extra := ""
		if cursor != "" {
			extra = `, "cursor": "` + cursor + `"`
		}
		raw, err := sqltest.Call(t, c, "query", fmt.Sprintf(args, extra), "")
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) > 2048+512 {
			t.Fatalf("page %d is %d bytes", page, len(raw))
		}
		r := decode[queryResult](t, raw)
		if len(r.Rows) == 0 || len(r.Rows) >= 50 {
			t.Fatalf("page %d: %d rows", page, len(r.Rows))
		}
		for _, row := range r.Rows {
			seen++
			if id, _ := row[0].(json.Number).Int64(); id != int64(seen) {
				t.Fatalf("page %d: row %d, want %d", page, id, seen)
			}
		}
		if cursor = r.Next; cursor == "" {
			break
		}
	}
	if seen != 250 {
		t.Fatalf("pages gave %d rows, want 250", seen)
	}
	if _, err := sqltest.Call(t, c, "query", `{"sql": "SELECT repeat('x', 5000)"}`, ""); sqltest.Code(err) != legate.CodeInvalidArgument {
		t.Fatalf("a row past max_result_bytes: %v", err)
	}
}
