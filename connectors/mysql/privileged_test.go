package mysql_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/sqlbase/sqltest"
)

// TestReadOnlyPrivilegedUserRefused: a read_only instance as root, or as
// a user granted FILE, refuses to start (its connection test and its
// calls fail, naming the user, the privilege and allow_privileged_role);
// with allow_privileged_role it starts and logs a warning naming both; an
// instance that writes is not checked.
func TestReadOnlyPrivilegedUserRefused(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	user := "legate_file_" + randHex()
	t.Cleanup(func() { f.admin.Exec("DROP USER IF EXISTS " + user + "@'%'") })
	f.exec(t, "CREATE USER "+user+"@'%'")
	f.exec(t, "GRANT FILE ON *.* TO "+user+"@'%'")
	f.exec(t, "GRANT SELECT ON "+f.db+".* TO "+user+"@'%'")
	for _, tc := range []struct{ user, name, privilege string }{
		{"", f.user + "@", "FILE, SUPER"},
		{user, user + "@%", "FILE"},
	} {
		c := f.connector(t, tc.user, "read_only: true\n")
		err := c.Test(ctx, connectortest.Creds{})
		if sqltest.Code(err) != legate.CodePermissionDenied {
			t.Fatalf("%s: Test of a read_only instance: %v, want PERMISSION_DENIED", tc.name, err)
		}
		for _, want := range []string{tc.name, "holds " + tc.privilege, "allow_privileged_role: true"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal %q does not name %s", err, want)
			}
		}
		if _, err := sqltest.Call(t, c, "query", `{"sql": "SELECT 1"}`, ""); sqltest.Code(err) != legate.CodePermissionDenied {
			t.Errorf("%s: query on a refused instance: %v", tc.name, err)
		}
	}

	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	c := f.connector(t, user, "read_only: true\nallow_privileged_role: true\n")
	if err := c.Test(ctx, connectortest.Creds{}); err != nil {
		t.Fatalf("Test with allow_privileged_role: %v", err)
	}
	line := logs.String()
	if !strings.Contains(line, "level=WARN") || !strings.Contains(line, user+"@%") || !strings.Contains(line, "privileges=FILE") {
		t.Fatalf("no warning naming the user and the privilege at start: %q", line)
	}
	if err := f.connector(t, "", "").Test(ctx, connectortest.Creds{}); err != nil {
		t.Errorf("an instance that writes is not checked: %v", err)
	}
}
