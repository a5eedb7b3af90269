package postgres_test

import (
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/sqlbase/sqltest"
)

// buildErr builds a postgres instance from config and returns the error
// of its validation.
func buildErr(t *testing.T, config string) error {
	t.Helper()
	ct, _ := connectors.Lookup("postgres")
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(config), &node); err != nil {
		t.Fatal(err)
	}
	c, err := connectors.Build(ct, "pg", &node, "config")
	if err == nil {
		c.(connectors.Closer).Close()
	}
	return err
}

// TestDSNConnects: an instance given as a URL or as a keyword/value
// string, with no split fields, validates, connects and reads the
// database the DSN names.
func TestDSNConnects(t *testing.T) {
	f := setup(t)
	for name, dsn := range map[string]string{
		"postgres URL":   fmt.Sprintf("postgres://%s@%s:%s/%s?sslmode=disable", f.user, f.host, f.port, f.db),
		"postgresql URL": fmt.Sprintf("postgresql://%s@%s:%s/%s?sslmode=disable&application_name=from_dsn", f.user, f.host, f.port, f.db),
		"keyword/value":  fmt.Sprintf("host=%s port=%s dbname='%s' user=%s sslmode=disable", f.host, f.port, f.db, f.user),
	} {
		t.Run(name, func(t *testing.T) {
			c := connectortestBuild(t, "dsn: "+yamlQuote(dsn)+"\n")
			if err := c.Test(t.Context(), nil); err != nil {
				t.Fatalf("Test: %v", err)
			}
			raw, err := sqltest.Call(t, c, "query", `{"sql": "SELECT current_database() AS db, current_setting('application_name') AS app"}`, "")
			if err != nil {
				t.Fatal(err)
			}
			res := decode[queryResult](t, raw)
			if res.Rows[0][0] != f.db {
				t.Errorf("connected to %v, want %s", res.Rows[0][0], f.db)
			}
			want := "legate"
			if strings.Contains(dsn, "application_name") {
				want = "from_dsn"
			}
			if res.Rows[0][1] != want {
				t.Errorf("application_name %v, want %s", res.Rows[0][1], want)
			}
		})
	}
}

// TestDSNRefused: a DSN carrying a password is refused, saying to use the
// password credential and never echoing the password; dsn beside the
// split fields, or a DSN of another scheme, is refused naming dsn.
func TestDSNRefused(t *testing.T) {
	for name, tc := range map[string]struct{ config, want string }{
		"URL with password":           {"dsn: postgres://app:s3cr3tpw@db:5432/app\n", "password credential"},
		"URL with password parameter": {"dsn: postgresql://app@db/app?password=s3cr3tpw\n", "password credential"},
		"keyword password":            {"dsn: \"host=db dbname=app user=app password=s3cr3tpw\"\n", "password credential"},
		"keyword quoted password":     {"dsn: \"host=db dbname=app password = 's3cr3tpw x'\"\n", "password credential"},
		"with host":                   {"dsn: postgres://app@db/app\nhost: db\n", "not both"},
		"with user and database":      {"dsn: postgres://app@db/app\nuser: app\ndatabase: app\n", "not both"},
		"another scheme":              {"dsn: mysql://app@db/app\n", "postgres:// or postgresql://"},
		"unclosed quote":              {"dsn: \"host=db dbname='app\"\n", "no closing quote"},
		"neither dsn nor fields":      {"sslmode: disable\n", "database: is required (or give dsn)"},
	} {
		t.Run(name, func(t *testing.T) {
			err := buildErr(t, tc.config)
			if err == nil {
				t.Fatalf("%q accepted", tc.config)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), "dsn") {
				t.Errorf("error %q does not name dsn", err)
			}
			if strings.Contains(err.Error(), "s3cr3tpw") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

func connectortestBuild(t *testing.T, config string) connectors.Connector {
	t.Helper()
	ct, _ := connectors.Lookup("postgres")
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(config), &node); err != nil {
		t.Fatal(err)
	}
	c, err := connectors.Build(ct, "pg", &node, "config")
	if err != nil {
		t.Fatalf("%s: %v", config, err)
	}
	t.Cleanup(func() { c.(connectors.Closer).Close() })
	return c
}

func yamlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// TestToolsets: toolsets selects the groups an instance offers (all by
// default), read_only leaves execute out of any, the catalog lists every
// tool with its toolset, and an unknown toolset is refused naming the
// known ones.
func TestToolsets(t *testing.T) {
	names := func(c connectors.Connector) string {
		var out []string
		for _, tool := range c.Tools() {
			out = append(out, tool.Name)
		}
		return strings.Join(out, ",")
	}
	base := "host: db\ndatabase: app\nuser: app\n"
	for config, want := range map[string]string{
		"":                                   "query,schema,execute,describe_table,sample_table,explain,top_queries,health",
		"read_only: true\n":                  "query,schema,describe_table,sample_table,explain,top_queries,health",
		"toolsets: [inspect]\n":              "describe_table,sample_table",
		"toolsets: [query, diagnostics]\n":   "query,schema,execute,explain,top_queries,health",
		"toolsets: [all]\nread_only: true\n": "query,schema,describe_table,sample_table,explain,top_queries,health",
		"toolsets: [default]\n":              "query,schema,execute,describe_table,sample_table,explain,top_queries,health",
	} {
		c := connectortestBuild(t, base+config)
		if got := names(c); got != want {
			t.Errorf("%q: tools %s, want %s", config, got, want)
		}
		sets := map[string]string{}
		for _, tool := range c.(connectors.ToolCatalog).ToolCatalog() {
			sets[tool.Name] = tool.Toolset
		}
		if len(sets) != 8 || sets["execute"] != "query" || sets["describe_table"] != "inspect" || sets["health"] != "diagnostics" {
			t.Errorf("%q: catalog %v", config, sets)
		}
	}
	if err := buildErr(t, base+"toolsets: [admin]\n"); err == nil || !strings.Contains(err.Error(), "toolsets") ||
		!strings.Contains(err.Error(), "diagnostics") {
		t.Errorf("unknown toolset: %v", err)
	}
}
