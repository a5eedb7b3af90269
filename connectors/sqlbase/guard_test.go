package sqlbase_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/sqlbase"
	"github.com/legate-mcp/legate/connectors/sqlbase/sqltest"
)

func TestCheckReadCorpus(t *testing.T) {
	for _, d := range []sqlbase.Dialect{sqlbase.Postgres, sqlbase.MySQL} {
		for _, c := range sqltest.Bypasses(d) {
			t.Run(d.String()+"/"+c.Name, func(t *testing.T) {
				sql := sqltest.Fill(c.SQL, "canary", "/tmp/never")
				_, err := sqlbase.CheckRead(d, sql)
				switch c.Outcome {
				case sqltest.Refused:
					if sqltest.Code(err) != legate.CodeInvalidArgument || !strings.Contains(err.Error(), "sql guard") {
						t.Errorf("%q: accepted or wrong error: %v", sql, err)
					}
				case sqltest.Read, sqltest.Failed:
					if err != nil {
						t.Errorf("%q: refused a read: %v", sql, err)
					}
				}
			})
		}
	}
}

func TestCheckReadText(t *testing.T) {
	tests := map[string]struct {
		d          sqlbase.Dialect
		in, text   string
		params     int
		refusedFor string
	}{
		"comments removed":       {d: sqlbase.Postgres, in: "SELECT /* c */ 1 -- x\n, 2;", text: "SELECT 1 , 2"},
		"nested comment removed": {d: sqlbase.Postgres, in: "SELECT 1 /* a /* b */ c */ + 2", text: "SELECT 1 + 2"},
		"params counted by max":  {d: sqlbase.Postgres, in: "SELECT $2::int + $1::int", text: "SELECT $2::int + $1::int", params: 2},
		"mysql params counted":   {d: sqlbase.MySQL, in: "SELECT ? + ?", text: "SELECT ? + ?", params: 2},
		"mysql dash kept joined": {d: sqlbase.MySQL, in: "SELECT 1 --/**/1", text: "SELECT 1 --1"},
		"string kept verbatim":   {d: sqlbase.Postgres, in: "SELECT 'a  /* b */ -- c'", text: "SELECT 'a  /* b */ -- c'"},
		"dollar kept verbatim":   {d: sqlbase.Postgres, in: "SELECT $f$ ; $f$", text: "SELECT $f$ ; $f$"},
		"leading paren":          {d: sqlbase.MySQL, in: "((SELECT 1))", text: "((SELECT 1))"},
		"quoted keyword column":  {d: sqlbase.Postgres, in: `SELECT "update" FROM t`, text: `SELECT "update" FROM t`},
		"bare keyword column":    {d: sqlbase.Postgres, in: `SELECT t.update FROM t`, refusedFor: "UPDATE"},
		"show":                   {d: sqlbase.MySQL, in: "SHOW TABLES", refusedFor: "SHOW"},
		"empty":                  {d: sqlbase.MySQL, in: " -- nothing\n;", refusedFor: "empty"},
		"schema function":        {d: sqlbase.Postgres, in: "SELECT x.lo_get(1)", refusedFor: "lo_get"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			st, err := sqlbase.CheckRead(tc.d, tc.in)
			if tc.refusedFor != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refusedFor) {
					t.Fatalf("want a refusal naming %q, got %v", tc.refusedFor, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Text != tc.text || st.Params != tc.params {
				t.Fatalf("got %q (%d params), want %q (%d)", st.Text, st.Params, tc.text, tc.params)
			}
		})
	}
}

func TestCheckWrite(t *testing.T) {
	tests := map[string]struct {
		d   sqlbase.Dialect
		sql string
		ok  bool
	}{
		"insert":                 {sqlbase.Postgres, "INSERT INTO t (a) VALUES ($1)", true},
		"insert with nextval":    {sqlbase.Postgres, "INSERT INTO t (id) VALUES (nextval('s'))", true},
		"update returning":       {sqlbase.Postgres, "UPDATE t SET a = $1 WHERE id = $2 RETURNING id", true},
		"merge":                  {sqlbase.Postgres, "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE", true},
		"with delete":            {sqlbase.Postgres, "WITH d AS (SELECT 1) DELETE FROM t WHERE id IN (SELECT * FROM d)", true},
		"replace":                {sqlbase.MySQL, "REPLACE INTO t (a) VALUES (?)", true},
		"chained":                {sqlbase.Postgres, "INSERT INTO t VALUES (1); DROP TABLE t", false},
		"select":                 {sqlbase.Postgres, "SELECT 1", false},
		"with select":            {sqlbase.Postgres, "WITH a AS (SELECT 1) SELECT * FROM a", false},
		"drop":                   {sqlbase.MySQL, "DROP TABLE t", false},
		"copy":                   {sqlbase.Postgres, "COPY t FROM PROGRAM 'id'", false},
		"insert from a file":     {sqlbase.Postgres, "INSERT INTO t SELECT pg_read_file('/etc/passwd')", false},
		"insert select outfile":  {sqlbase.MySQL, "INSERT INTO t SELECT 1 INTO OUTFILE '/tmp/x'", false},
		"set_config in a write":  {sqlbase.Postgres, "UPDATE t SET a = set_config('role', 'x', false)", false},
		"mysql merge is unknown": {sqlbase.MySQL, "MERGE INTO t USING s ON 1 WHEN MATCHED THEN DELETE", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := sqlbase.CheckWrite(tc.d, tc.sql)
			if (err == nil) != tc.ok {
				t.Fatalf("accepted=%v, want %v: %v", err == nil, tc.ok, err)
			}
			if err != nil && sqltest.Code(err) != legate.CodeInvalidArgument {
				t.Fatalf("refusal is %v, want INVALID_ARGUMENT", err)
			}
		})
	}
}

// FuzzGuard checks, for both dialects, that the guard never panics and
// that what it accepts is exactly what it checked: the text it sends
// lexes to the same tokens as the input (so no comment, string or quote
// was read one way by the guard and another way in the text sent), holds
// no semicolon, and is accepted again unchanged. Every accepted input of
// the seed corpus and of testdata/fuzz is also run against the real
// databases by the postgres and mysql connectors' replay tests.
//
// Longer: go test -run '^$' -fuzz '^FuzzGuard$' -fuzztime 10m ./connectors/sqlbase
func FuzzGuard(f *testing.F) {
	for _, s := range sqltest.Seeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		for _, d := range []sqlbase.Dialect{sqlbase.Postgres, sqlbase.MySQL} {
			for _, check := range []func(sqlbase.Dialect, string) (*sqlbase.Statement, error){sqlbase.CheckRead, sqlbase.CheckWrite} {
				st, err := check(d, sql)
				if err != nil {
					if sqltest.Code(err) != legate.CodeInvalidArgument {
						t.Fatalf("%s: refusal %v is not INVALID_ARGUMENT", d, err)
					}
					continue
				}
				in, _ := sqlbase.Tokens(d, sql)
				for len(in) > 0 && in[len(in)-1] == tokSemi {
					in = in[:len(in)-1]
				}
				out, err := sqlbase.Tokens(d, st.Text)
				if err != nil {
					t.Fatalf("%s: accepted %q, but the text sent, %q, does not lex: %v", d, sql, st.Text, err)
				}
				if !slices.Equal(in, out) {
					t.Fatalf("%s: accepted %q, but the text sent, %q, reads differently:\n in  %q\n out %q", d, sql, st.Text, in, out)
				}
				if slices.Contains(out, tokSemi) {
					t.Fatalf("%s: accepted %q with a semicolon", d, sql)
				}
				again, err := check(d, st.Text)
				if err != nil || again.Text != st.Text || again.Params != st.Params {
					t.Fatalf("%s: %q accepted as %q, which is then %v %v", d, sql, st.Text, again, err)
				}
			}
		}
	})
}

// tokSemi is how Tokens shows a semicolon.
var tokSemi = string(rune('0'+6)) + ";"

func TestAllowFunctions(t *testing.T) {
	allow, errs := sqlbase.NewFuncs(sqlbase.Postgres, []string{"similarity", "App.Net_Price"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	tests := map[string]bool{
		"SELECT similarity('a', 'b')":                   true,
		"SELECT public.similarity('a', 'b')":            true,
		"SELECT app.net_price(1)":                       true,
		`SELECT "app"."net_price"(1)`:                   true,
		"SELECT net_price(1)":                           false,
		"SELECT other.net_price(1)":                     false,
		"SELECT word_similarity('a', 'b')":              false,
		"SELECT lower('A'), pg_catalog.upper(v) FROM t": true,
	}
	for sql, ok := range tests {
		_, err := sqlbase.CheckReadAllowing(sqlbase.Postgres, sql, allow)
		if (err == nil) != ok {
			t.Errorf("%s: accepted=%v, want %v (%v)", sql, err == nil, ok, err)
		}
		if !ok && err != nil && !strings.Contains(err.Error(), "allow_functions") {
			t.Errorf("%s: the refusal does not name allow_functions: %v", sql, err)
		}
	}
	if _, err := sqlbase.CheckRead(sqlbase.Postgres, "SELECT similarity('a', 'b')"); err == nil {
		t.Error("an extension's function is accepted without allow_functions")
	}
	for _, d := range []sqlbase.Dialect{sqlbase.Postgres, sqlbase.MySQL} {
		bad := map[sqlbase.Dialect][]string{
			sqlbase.Postgres: {"crosstab", "public.crosstab3", "dblink_exec", "pg_read_file", "xpath_table", "connectby", "pg_advisory_lock", "bad name", "a.b.c"},
			sqlbase.MySQL:    {"load_file", "SLEEP", "benchmark", "get_lock", "sys_exec", "x;y"},
		}[d]
		_, errs := sqlbase.NewFuncs(d, bad)
		if len(errs) != len(bad) {
			t.Errorf("%s: %d of %d entries refused: %v", d, len(errs), len(bad), errs)
		}
	}
}
