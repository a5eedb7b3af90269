package postgres_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/sqlbase"
	"github.com/legate-mcp/legate/connectors/sqlbase/sqltest"
)

// TestReadOnlyPrivilegedRoleRefused: a read_only instance on a superuser,
// or on a role granted pg_read_server_files, refuses to start (its
// connection test and its calls fail, naming the role, the privilege and
// allow_privileged_role); with allow_privileged_role it starts and logs a
// warning naming both; an instance that writes is not checked.
func TestReadOnlyPrivilegedRoleRefused(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	reader := "legate_files_" + randHex()
	f.exec(t, "CREATE ROLE "+reader+" LOGIN")
	t.Cleanup(func() {
		f.admin.Exec(ctx, "DROP OWNED BY "+reader)
		f.admin.Exec(ctx, "DROP ROLE IF EXISTS "+reader)
	})
	f.exec(t, "GRANT pg_read_server_files TO "+reader)
	for _, tc := range []struct{ user, role, privilege string }{
		{"", f.user, "superuser"},
		{reader, reader, "pg_read_server_files"},
	} {
		c := f.connector(t, tc.user, "read_only: true\n")
		err := c.Test(ctx, connectortest.Creds{})
		if sqltest.Code(err) != legate.CodePermissionDenied {
			t.Fatalf("%s: Test of a read_only instance: %v, want PERMISSION_DENIED", tc.role, err)
		}
		for _, want := range []string{`"` + tc.role + `"`, tc.privilege, "allow_privileged_role: true"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the refusal %q does not name %s", tc.role, err, want)
			}
		}
		if _, err := sqltest.Call(t, c, "query", `{"sql": "SELECT 1"}`, ""); sqltest.Code(err) != legate.CodePermissionDenied {
			t.Errorf("%s: query on a refused instance: %v", tc.role, err)
		}
	}

	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	c := f.connector(t, "", "read_only: true\nallow_privileged_role: true\n")
	if err := c.Test(ctx, connectortest.Creds{}); err != nil {
		t.Fatalf("Test with allow_privileged_role: %v", err)
	}
	if _, err := sqltest.Call(t, c, "query", `{"sql": "SELECT 1"}`, ""); err != nil {
		t.Fatalf("query with allow_privileged_role: %v", err)
	}
	line := logs.String()
	if !strings.Contains(line, "level=WARN") || !strings.Contains(line, "role="+f.user) || !strings.Contains(line, "privileges=superuser") {
		t.Fatalf("no warning naming the role and the privilege at start: %q", line)
	}
	if n := strings.Count(line, "level=WARN"); n != 1 {
		t.Errorf("%d warnings for one start, want 1: %q", n, line)
	}
	if err := f.connector(t, "", "").Test(ctx, connectortest.Creds{}); err != nil {
		t.Errorf("an instance that writes is not checked: %v", err)
	}
}

// TestReproductionsBelowTheGuard sends the reported bypasses straight to
// the backend as a superuser, in the READ ONLY transaction the guard
// stands in front of: each reads a server file or deletes rows, so the
// guard's refusal (TestBypassCorpus) is what stops them — and the function
// denylist the allowlist replaced let each of them through.
func TestReproductionsBelowTheGuard(t *testing.T) {
	f := setup(t)
	f.extensions(t, "dblink", "tablefunc")
	f.exec(t, "CREATE TABLE legate_victim AS SELECT g AS id FROM generate_series(1, 3) g")
	c := f.connector(t, "", "read_only: true\nallow_privileged_role: true\n")
	b := c.(sqlbase.Backend)
	host, err := os.ReadFile("/etc/hostname")
	if err != nil {
		t.Skip("/etc/hostname: ", err)
	}
	read := func(sql string) (*sqlbase.Rows, error) {
		return b.Read(context.Background(), nil, &sqlbase.ReadRequest{SQL: sql, Max: 10, Timeout: 5 * time.Second, Schemas: []string{"public"}})
	}
	for _, sql := range []string{
		"SELECT * FROM crosstab('SELECT 1::text, 1::text, pg_read_file(''/etc/hostname'')') AS t(r text, c text)",
		"SELECT ('/etc/hostname'::text).pg_read_file",
	} {
		rows, err := read(sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if got := rows.Values[0][len(rows.Values[0])-1]; got != string(host) {
			t.Fatalf("%s gave %q, want the file", sql, got)
		}
		if _, err := sqlbase.CheckRead(sqlbase.Postgres, sql); err == nil {
			t.Errorf("the guard accepts %s", sql)
		}
	}
	sql := "SELECT * FROM crosstab('SELECT 1::text, 1::text, dblink_exec(''dbname='' || current_database(), ''DELETE FROM legate_victim'')') AS t(r text, c text)"
	if _, err := read(sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var n int
	f.admin.QueryRow(context.Background(), "SELECT count(*) FROM legate_victim").Scan(&n)
	if n != 0 {
		t.Fatalf("dblink_exec inside crosstab left %d rows in a READ ONLY transaction, want 0 (the test shows the harm)", n)
	}
	if _, err := sqlbase.CheckRead(sqlbase.Postgres, sql); err == nil {
		t.Errorf("the guard accepts %s", sql)
	}
}

// TestAllowFunctionsConfig: allow_functions lets query call an
// extension's function, and may not name one the guard always refuses.
func TestAllowFunctionsConfig(t *testing.T) {
	f := setup(t)
	f.extensions(t, "tablefunc")
	c := f.connector(t, "", "allow_functions: [normal_rand]\n")
	if _, err := sqltest.Call(t, c, "query", `{"sql": "SELECT count(*) FROM normal_rand(3, 0, 1)"}`, ""); err != nil {
		t.Fatalf("an allowed extension function: %v", err)
	}
	ct, _ := connectors.Lookup("postgres")
	var node yaml.Node
	yaml.Unmarshal([]byte("database: x\nuser: x\nallow_functions: [crosstab]\n"), &node)
	_, err := connectors.Build(ct, "pg", &node, "config")
	if err == nil || !strings.Contains(err.Error(), "allow_functions") || !strings.Contains(err.Error(), "crosstab") {
		t.Fatalf("allow_functions naming crosstab: %v", err)
	}
}
