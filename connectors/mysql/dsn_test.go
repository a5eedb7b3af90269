package mysql_test

import (
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/sqlbase/sqltest"
)

// build builds a mysql instance from config, or returns the error of its
// validation.
func build(t *testing.T, config string) (connectors.Connector, error) {
	t.Helper()
	ct, _ := connectors.Lookup("mysql")
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(config), &node); err != nil {
		t.Fatal(err)
	}
	c, err := connectors.Build(ct, "my", &node, "config")
	if err == nil {
		t.Cleanup(func() { c.(connectors.Closer).Close() })
	}
	return c, err
}

// TestDSNConnects: an instance given as a mysql:// URL or as the driver's
// own form, with no split fields, validates, connects and reads the
// database the DSN names, also when it asks for driver settings the
// connector overrides (multiStatements).
func TestDSNConnects(t *testing.T) {
	f := setup(t)
	for name, dsn := range map[string]string{
		"mysql URL":   fmt.Sprintf("mysql://%s@%s:%s/%s?tls=false", f.user, f.host, f.port, f.db),
		"driver form": fmt.Sprintf("%s@tcp(%s:%s)/%s?tls=false", f.user, f.host, f.port, f.db),
		"with params": fmt.Sprintf("%s@tcp(%s:%s)/%s?tls=false&multiStatements=true", f.user, f.host, f.port, f.db),
	} {
		t.Run(name, func(t *testing.T) {
			c, err := build(t, "dsn: '"+dsn+"'\n")
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Test(t.Context(), nil); err != nil {
				t.Fatalf("Test: %v", err)
			}
			raw, err := sqltest.Call(t, c, "query", `{"sql": "SELECT DATABASE() AS db"}`, "")
			if err != nil {
				t.Fatal(err)
			}
			if res := decode[queryResult](t, raw); res.Rows[0][0] != f.db {
				t.Errorf("connected to %v, want %s", res.Rows[0][0], f.db)
			}
			// The schema tool lists the DSN's database by default.
			raw, err = sqltest.Call(t, c, "schema", `{"table": "legate_canary"}`, "")
			if err != nil || !strings.Contains(string(raw), `"legate_canary"`) {
				t.Errorf("schema of the DSN's database: %s, %v", raw, err)
			}
		})
	}
}

// TestDSNRefused: a DSN carrying a password is refused, saying to use the
// password credential and never echoing it; dsn beside the split fields,
// a DSN of another scheme or without a database is refused naming dsn.
func TestDSNRefused(t *testing.T) {
	for name, tc := range map[string]struct{ config, want string }{
		"URL with password":         {"dsn: mysql://app:s3cr3tpw@db:3306/app\n", "password credential"},
		"driver form with password": {"dsn: 'app:s3cr3tpw@tcp(db:3306)/app'\n", "password credential"},
		"password with an @":        {"dsn: 'app:s3cr3t@pw@tcp(db:3306)/app'\n", "password credential"},
		"with host":                 {"dsn: 'app@tcp(db:3306)/app'\nhost: db\n", "not both"},
		"with database":             {"dsn: 'app@tcp(db:3306)/app'\ndatabase: app\n", "not both"},
		"another scheme":            {"dsn: postgres://app@db/app\n", "mysql:// URL"},
		"no database":               {"dsn: 'app@tcp(db:3306)/'\n", "names no database"},
		"does not parse":            {"dsn: 'app@tcp(db:3306'\n", "does not parse"},
		"neither dsn nor fields":    {"tls: \"false\"\n", "user: is required (or give dsn)"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := build(t, tc.config)
			if err == nil {
				t.Fatalf("%q accepted", tc.config)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "dsn") {
				t.Errorf("error %q does not say %q and name dsn", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}
