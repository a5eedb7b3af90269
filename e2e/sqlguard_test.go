package e2e_test

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/connectors/sqlbase"
	"github.com/legate-mcp/legate/connectors/sqlbase/sqltest"
)

// A principal of `legate serve` sends every statement of the bypass
// corpus that the guard must refuse (functions that run SQL text —
// crosstab over pg_read_file, dblink_exec wrapped in crosstab —, COPY TO
// PROGRAM, pg_cancel_backend, pg_advisory_lock…) to a read_only instance
// connected as a superuser with tablefunc, dblink and xml2 installed,
// which the operator allowed explicitly: each is refused, the canary table
// is unchanged and no file is written. The same instance without
// allow_privileged_role refuses to run at all.
func TestServeSQLGuardOnASuperuser(t *testing.T) {
	binary(t) // legate serve and the CLI, no peer
	ctx := t.Context()
	raw := sqltest.Env("LEGATE_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
	admin, err := pgx.Connect(ctx, raw)
	if err != nil {
		sqltest.Unavailable(t, "PostgreSQL", "LEGATE_TEST_POSTGRES_URL", err)
	}
	defer admin.Close(ctx)
	for _, ext := range []string{"tablefunc", "dblink", "xml2"} {
		if _, err := admin.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS "+ext); err != nil {
			t.Logf("extension %s is not available (%v): its cases are refused by name all the same", ext, err)
		}
	}
	const canary = "legate_e2e_canary"
	if _, err := admin.Exec(ctx, "DROP TABLE IF EXISTS "+canary+"; CREATE TABLE "+canary+" (id int PRIMARY KEY, v text); INSERT INTO "+canary+" VALUES (1, 'a'), (2, 'b')"); err != nil {
		t.Fatal(err)
	}
	defer admin.Exec(ctx, "DROP TABLE IF EXISTS "+canary)
	sum := func() string {
		var s string
		if err := admin.QueryRow(ctx, "SELECT md5(string_agg(id || ':' || v, ',' ORDER BY id)) FROM "+canary).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := sum()

	u, _ := url.Parse(raw)
	file := filepath.Join(t.TempDir(), "written-by-the-server")
	write := func(extra string) string {
		config := filepath.Join(t.TempDir(), "config.yaml")
		doc := fmt.Sprintf(`auth:
  tokens: true
connectors:
  - id: pg
    type: postgres
    config: {host: %q, port: %s, database: %q, user: %q, sslmode: disable, read_only: true%s}
`, u.Hostname(), u.Port(), strings.TrimPrefix(u.Path, "/"), u.User.Username(), extra)
		if err := os.WriteFile(config, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return config
	}
	serveAs := func(config string) *mcp.ClientSession {
		t.Helper()
		state := t.TempDir()
		out := legateCLI(t, "token", "create", "mallory", "--config", config, "--state-dir", state)
		token := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
		s := serveState(t, config, state)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "mallory", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: s.url("127.0.0.1"), HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	query := func(cs *mcp.ClientSession, sql string) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pg__query", Arguments: map[string]any{"sql": sql}})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}

	refused := serveAs(write(""))
	if text, isErr := query(refused, "SELECT 1"); !isErr || !strings.Contains(text, "PERMISSION_DENIED") || !strings.Contains(text, "allow_privileged_role") {
		t.Errorf("a read_only instance on a superuser answered %q; want PERMISSION_DENIED naming allow_privileged_role", text)
	}

	cs := serveAs(write(", allow_privileged_role: true"))
	if text, isErr := query(cs, "SELECT count(*) AS n FROM "+canary); isErr {
		t.Fatalf("an ordinary read failed: %s", text)
	}
	n := 0
	for _, c := range sqltest.Bypasses(sqlbase.Postgres) {
		if c.Outcome != sqltest.Refused {
			continue
		}
		n++
		if text, isErr := query(cs, sqltest.Fill(c.SQL, canary, file)); !isErr || !strings.Contains(text, "INVALID_ARGUMENT") {
			t.Errorf("%s: %q; want the guard's INVALID_ARGUMENT", c.Name, text)
		}
	}
	if after := sum(); after != before {
		t.Errorf("the canary table changed: %s, was %s", after, before)
	}
	if _, err := os.Stat(file); err == nil {
		t.Errorf("the server wrote %s", file)
	}
	t.Logf("%d statements refused through legate serve", n)
}
