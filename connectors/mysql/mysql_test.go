package mysql_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	_ "github.com/legate-mcp/legate/connectors/mysql"
	"github.com/legate-mcp/legate/connectors/sqlbase"
	"github.com/legate-mcp/legate/connectors/sqlbase/sqltest"
)

const dsnEnv = "LEGATE_TEST_MYSQL_DSN"

func TestContract(t *testing.T) {
	sample, err := os.ReadFile("sample.yaml")
	if err != nil {
		t.Fatal(err)
	}
	connectortest.Run(t, connectortest.Case{Type: "mysql", Config: string(sample), Credentials: map[string]string{"password": "x"}})
}

// fixture is a database of its own on the test server, dropped at the end.
type fixture struct {
	admin      *sql.DB // root, on the fixture's database
	db         string
	host, port string
	user       string
	sequences  bool
}

func setup(t testing.TB) *fixture {
	t.Helper()
	cfg, err := driver.ParseDSN(sqltest.Env(dsnEnv, "root@tcp(127.0.0.1:3306)/test"))
	if err != nil {
		t.Fatalf("%s: %v", dsnEnv, err)
	}
	cfg.ParseTime = true
	root, err := sql.Open("mysql", cfg.FormatDSN())
	if err == nil {
		err = root.Ping()
	}
	if err != nil {
		sqltest.Unavailable(t, "MySQL or MariaDB", dsnEnv, err)
	}
	t.Cleanup(func() { root.Close() })
	f := &fixture{db: "legate_t_" + randHex(), user: cfg.User}
	if _, err := root.Exec("CREATE DATABASE " + f.db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Exec("DROP DATABASE IF EXISTS " + f.db) })
	cfg.DBName = f.db
	if f.admin, err = sql.Open("mysql", cfg.FormatDSN()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.admin.Close() })
	f.host, f.port, _ = net.SplitHostPort(cfg.Addr)
	f.exec(t, "CREATE TABLE legate_canary (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(100) NOT NULL) ENGINE=InnoDB")
	f.exec(t, "INSERT INTO legate_canary (v) SELECT CONCAT('row ', seq) FROM seq_1_to_250")
	_, err = f.admin.Exec("CREATE SEQUENCE legate_canary_seq")
	f.sequences = err == nil
	return f
}

func (f *fixture) exec(t testing.TB, q string, args ...any) {
	t.Helper()
	if _, err := f.admin.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func (f *fixture) connector(t testing.TB, user, extra string) connectors.Connector {
	t.Helper()
	if user == "" {
		user = f.user
	}
	c := connectortest.Build(t, "mysql", "my", fmt.Sprintf("host: %s\nport: %s\ndatabase: %s\nuser: %s\ntls: \"false\"\n%s",
		f.host, f.port, f.db, user, extra))
	t.Cleanup(func() { c.(connectors.Closer).Close() })
	return c
}

// state is what a bypass must never change: the canary's rows and
// AUTO_INCREMENT, the sequence, the tables of the database.
func (f *fixture) state(t *testing.T) string {
	t.Helper()
	var rows, sum, maxID, tables string
	err := f.admin.QueryRow(`SELECT COUNT(*), COALESCE(SUM(CRC32(CONCAT(id, ':', v))), 0), COALESCE(MAX(id), 0),
		(SELECT GROUP_CONCAT(TABLE_NAME ORDER BY TABLE_NAME) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE())
		FROM legate_canary`).Scan(&rows, &sum, &maxID, &tables)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Join([]string{rows, sum, maxID, tables}, "|")
	var create string
	var name string
	if err := f.admin.QueryRow("SHOW CREATE TABLE legate_canary").Scan(&name, &create); err == nil {
		s += "|" + create // holds AUTO_INCREMENT=n
	}
	if f.sequences {
		var next string
		if err := f.admin.QueryRow("SELECT next_not_cached_value FROM legate_canary_seq").Scan(&next); err == nil {
			s += "|seq " + next
		}
	}
	return s
}

func randHex() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

type queryResult struct {
	Columns []struct{ Name, Type string }
	Rows    [][]any
	Count   int    `json:"row_count"`
	More    bool   `json:"truncated"`
	Next    string `json:"next_cursor"`
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

func TestQueryTypedRows(t *testing.T) {
	f := setup(t)
	f.exec(t, `CREATE TABLE typed (i INT, b BIGINT, n DECIMAL(20,4), d DOUBLE, s VARCHAR(20), ts DATETIME(3), dt DATE,
		bl VARBINARY(10), ok BOOLEAN, nul TEXT)`)
	f.exec(t, `INSERT INTO typed VALUES (42, 9007199254740993, 12345678901234.5678, 1.5, 'héllo', '2026-11-30 12:34:56.789',
		'2026-11-30', x'00ff10', true, NULL)`)
	c := f.connector(t, "", "")
	raw, err := sqltest.Call(t, c, "query", `{"sql": "SELECT * FROM typed WHERE i = ?", "params": [42]}`, "")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"columns":[{"name":"i","type":"INT"},{"name":"b","type":"BIGINT"},{"name":"n","type":"DECIMAL"},` +
		`{"name":"d","type":"DOUBLE"},{"name":"s","type":"VARCHAR"},{"name":"ts","type":"DATETIME"},{"name":"dt","type":"DATE"},` +
		`{"name":"bl","type":"VARBINARY"},{"name":"ok","type":"TINYINT"},{"name":"nul","type":"TEXT"}],` +
		`"rows":[[42,9007199254740993,12345678901234.5678,1.5,"héllo","2026-11-30T12:34:56.789Z","2026-11-30","AP8Q",1,null]],` +
		`"row_count":1,"truncated":false}`
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
	args := `{"sql": "SELECT id, v FROM legate_canary WHERE id > ?", "params": [0], "keyset": ["v", "id"], "limit": 120%s}`
	seen, cursor, last := 0, "", ""
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
			v := row[1].(string)
			if v <= last {
				t.Fatalf("page %d: %q after %q: not in keyset order", page, v, last)
			}
			last = v
		}
		if r.Next == "" {
			break
		}
		cursor = r.Next
	}
	if seen != 250 {
		t.Fatalf("pages gave %d rows, want 250", seen)
	}
}

func TestExecuteWritesOnce(t *testing.T) {
	f := setup(t)
	c := f.connector(t, "", "")
	insert := `{"sql": "INSERT INTO legate_canary (v) VALUES (?)", "params": ["written"]}`
	raw, err := sqltest.Call(t, c, "execute", insert, "op-1")
	if err != nil {
		t.Fatal(err)
	}
	first := decode[map[string]any](t, raw)
	if first["rows_affected"] != json.Number("1") || first["last_insert_id"] == nil || first["replayed"] != false {
		t.Fatalf("first write: %s", raw)
	}
	raw, err = sqltest.Call(t, c, "execute", insert, "op-1")
	if err != nil {
		t.Fatal(err)
	}
	again := decode[map[string]any](t, raw)
	if again["rows_affected"] != json.Number("1") || again["last_insert_id"] != first["last_insert_id"] || again["replayed"] != true {
		t.Fatalf("retried write: %s, first %v", raw, first)
	}
	var n int
	f.admin.QueryRow("SELECT COUNT(*) FROM legate_canary WHERE v = 'written'").Scan(&n)
	if n != 1 {
		t.Fatalf("%d rows written, want 1", n)
	}
	other := `{"sql": "INSERT INTO legate_canary (v) VALUES (?)", "params": ["other"]}`
	if _, err := sqltest.Call(t, c, "execute", other, "op-1"); sqltest.Code(err) != legate.CodeConflict {
		t.Fatalf("same key, other write: %v", err)
	}
	raw, err = sqltest.Call(t, c, "execute", `{"sql": "DELETE FROM legate_canary WHERE v = 'written'"}`, "op-2")
	if err != nil || !strings.Contains(string(raw), `"rows_affected":1`) {
		t.Fatalf("delete: %s %v", raw, err)
	}
}

func TestSchemaListsTables(t *testing.T) {
	f := setup(t)
	c := f.connector(t, "", "")
	raw, err := sqltest.Call(t, c, "schema", `{"table": "canary"}`, "")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tables":[{"schema":"` + f.db + `","name":"legate_canary","kind":"table","columns":[{"name":"id","type":"int(11)","nullable":false},{"name":"v","type":"varchar(100)","nullable":false}]}`
	if !strings.HasPrefix(string(raw), want) {
		t.Fatalf("got %s\nwant prefix %s", raw, want)
	}
}

func TestErrorsAreCanonical(t *testing.T) {
	f := setup(t)
	reader := "legate_r_" + randHex()
	f.exec(t, "CREATE USER "+reader+"@'%'")
	t.Cleanup(func() { f.admin.Exec("DROP USER " + reader + "@'%'") })
	c := f.connector(t, "", "statement_timeout: 300ms\n")
	r := f.connector(t, reader, "")
	tests := map[string]struct {
		c         connectors.Connector
		tool, sql string
		code      legate.Code
		msg       string
	}{
		"syntax":            {c, "query", "SELECT FROM WHERE", legate.CodeInvalidArgument, "1064"},
		"unknown column":    {c, "query", "SELECT nope FROM legate_canary", legate.CodeInvalidArgument, "Unknown column"},
		"permission denied": {r, "query", "SELECT * FROM legate_canary", legate.CodePermissionDenied, "denied"},
		"timeout":           {c, "query", "SELECT COUNT(*) FROM seq_1_to_100000 a, seq_1_to_100000 b WHERE a.seq + b.seq = 7", legate.CodeTransient, "statement timeout"},
		"duplicate key":     {c, "execute", "INSERT INTO legate_canary (id, v) VALUES (1, 'dup')", legate.CodeConflict, "1062"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := sqltest.Call(t, tc.c, tc.tool, fmt.Sprintf(`{"sql": %q}`, tc.sql), "op-"+name)
			var le *legate.Error
			if !errors.As(err, &le) || le.Code != tc.code || !strings.Contains(err.Error(), tc.msg) || !strings.HasPrefix(le.Message, "mysql: ") {
				t.Fatalf("got %v, want %s mentioning %q", err, tc.code, tc.msg)
			}
		})
	}
}

// TestBypassCorpus runs the corpus through query, as root (who has FILE
// and SUPER) and as a user granted only SELECT: each case gives its
// outcome, and nothing changes.
func TestBypassCorpus(t *testing.T) {
	f := setup(t)
	user := "legate_sel_" + randHex()
	t.Cleanup(func() { f.admin.Exec("DROP USER IF EXISTS " + user + "@'%'") })
	f.exec(t, "CREATE USER "+user+"@'%'")
	f.exec(t, "GRANT SELECT ON "+f.db+".* TO "+user+"@'%'")
	before := f.state(t)
	dir := os.TempDir()
	for _, u := range []string{"", user} {
		// root's instance is read_only with the override: the guard alone
		// stands between its queries and the server's files.
		c := f.connector(t, u, "statement_timeout: 500ms\nread_only: true\nallow_privileged_role: true\n")
		name := map[bool]string{true: "root", false: "select-only"}[u == ""]
		for i, bc := range sqltest.Bypasses(sqlbase.MySQL) {
			t.Run(name+"/"+bc.Name, func(t *testing.T) {
				file := fmt.Sprintf("%s/legate-bypass-%s-%s-%d", dir, f.db, name, i)
				sql := sqltest.Fill(bc.SQL, "legate_canary", file)
				args, _ := json.Marshal(map[string]string{"sql": sql})
				_, err := sqltest.Call(t, c, "query", string(args), "")
				checkOutcome(t, bc.Outcome, err)
				if _, statErr := os.Stat(file); statErr == nil {
					os.Remove(file)
					t.Errorf("%q created %s", sql, file)
				}
				if after := f.state(t); after != before {
					t.Fatalf("%q changed the database:\n before %s\n after  %s", sql, before, after)
				}
			})
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
	if err != nil && !errors.As(err, &le) {
		t.Errorf("not a canonical error: %v", err)
	}
}

// TestGuardReplay runs every seed and saved fuzz input the guard accepts
// as a read through query as root: nothing may change.
func TestGuardReplay(t *testing.T) {
	f := setup(t)
	c := f.connector(t, "", "statement_timeout: 500ms\n")
	before := f.state(t)
	inputs := sqltest.Seeds()
	for _, in := range sqltest.FuzzInputs(t) {
		inputs = append(inputs, in.SQL)
	}
	ran := 0
	for _, q := range inputs {
		if _, err := sqlbase.CheckRead(sqlbase.MySQL, q); err != nil {
			continue
		}
		ran++
		args, _ := json.Marshal(map[string]string{"sql": q})
		sqltest.Call(t, c, "query", string(args), "")
		if after := f.state(t); after != before {
			t.Fatalf("%q changed the database:\n before %s\n after  %s", q, before, after)
		}
	}
	if ran == 0 {
		t.Fatal("no input was accepted: the replay tested nothing")
	}
	t.Logf("%d of %d inputs accepted and run", ran, len(inputs))
}

// TestLayersBelowTheGuard sends statements the guard refuses straight to
// the backend as root: the prepared-statement protocol and the READ ONLY
// transaction stop those they can. (INTO OUTFILE and temporary tables
// pass a READ ONLY transaction in MariaDB: only the guard and the grants
// stop them, so they are not here.)
func TestLayersBelowTheGuard(t *testing.T) {
	f := setup(t)
	c := f.connector(t, "", "statement_timeout: 500ms\n")
	b := c.(sqlbase.Backend)
	before := f.state(t)
	for _, q := range []string{
		"SELECT 1; DELETE FROM legate_canary",
		"COMMIT; INSERT INTO legate_canary (v) VALUES ('x')",
		"INSERT INTO legate_canary (v) VALUES ('x')",
		"UPDATE legate_canary SET v = 'x'",
		"DELETE FROM legate_canary",
		"SELECT 1 /*!; DELETE FROM legate_canary */",
		"SELECT NEXT VALUE FOR legate_canary_seq",
		"SELECT NEXTVAL(legate_canary_seq)",
	} {
		_, err := b.Read(context.Background(), nil, &sqlbase.ReadRequest{SQL: q, Max: 10, Timeout: time.Second})
		if err == nil {
			t.Errorf("%q: ran", q)
		}
		if after := f.state(t); after != before {
			t.Fatalf("%q changed the database:\n before %s\n after  %s", q, before, after)
		}
	}
}

// TestReadOnlyUser gives a user the README's read-only grants and shows
// that the grants alone, with no guard and no READ ONLY transaction in
// front of them, refuse what the guard refuses (INTO OUTFILE included,
// which a READ ONLY transaction lets through); and that a read_only
// instance offers no execute.
func TestReadOnlyUser(t *testing.T) {
	f := setup(t)
	user := "legate_ro_" + randHex()
	t.Cleanup(func() { f.admin.Exec("DROP USER IF EXISTS " + user + "@'%'") })
	f.exec(t, "CREATE USER "+user+"@'%'")
	f.exec(t, "GRANT SELECT, SHOW VIEW ON "+f.db+".* TO "+user+"@'%'")
	c := f.connector(t, user, "read_only: true\n")
	for _, tool := range c.Tools() {
		if tool.Name == "execute" {
			t.Fatal("a read_only instance offers execute")
		}
	}
	raw, err := sqltest.Call(t, c, "query", `{"sql": "SELECT COUNT(*) AS n FROM legate_canary"}`, "")
	if err != nil || !strings.Contains(string(raw), `"rows":[[250]]`) {
		t.Fatalf("query as the read-only user: %s %v", raw, err)
	}
	cfg, _ := driver.ParseDSN(sqltest.Env(dsnEnv, "root@tcp(127.0.0.1:3306)/test"))
	cfg.User, cfg.Passwd, cfg.DBName = user, "", f.db
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before := f.state(t)
	file := fmt.Sprintf("%s/legate-ro-%s", os.TempDir(), f.db)
	for _, q := range []string{
		"INSERT INTO legate_canary (v) VALUES ('x')",
		"DELETE FROM legate_canary",
		"SELECT * FROM legate_canary INTO OUTFILE '" + file + "'",
		"CREATE TABLE legate_pwned (x int)",
		"SELECT NEXTVAL(legate_canary_seq)",
		"CREATE TEMPORARY TABLE t (x int)",
	} {
		if _, err := db.Exec(q); err == nil {
			t.Errorf("the read-only user ran %q", q)
		}
	}
	var content sql.NullString
	if err := db.QueryRow("SELECT LOAD_FILE('/etc/passwd')").Scan(&content); err == nil && content.Valid {
		t.Error("the read-only user read /etc/passwd with LOAD_FILE")
	}
	if _, err := os.Stat(file); err == nil {
		os.Remove(file)
		t.Errorf("%s was created", file)
	}
	if after := f.state(t); after != before {
		t.Fatalf("the read-only user changed the database:\n before %s\n after  %s", before, after)
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
	c := connectortest.Build(t, "mysql", "my", fmt.Sprintf("port: %d\ndatabase: x\nuser: x\ntls: \"false\"\nconnect_timeout: 1s\n", port))
	defer c.(connectors.Closer).Close()
	if err := c.Test(context.Background(), connectortest.Creds{}); sqltest.Code(err) != legate.CodeTransient {
		t.Fatalf("Test of a closed port: %v, want TRANSIENT", err)
	}
	if err := f.connector(t, "no_such_user_"+randHex(), "").Test(context.Background(), connectortest.Creds{"password": "x"}); sqltest.Code(err) != legate.CodeAuthExpired {
		t.Fatalf("Test as an unknown user: %v, want AUTH_EXPIRED", err)
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
	f.admin.QueryRow("SELECT COUNT(*) FROM legate_canary WHERE v = 'concurrent'").Scan(&rows)
	if rows != 1 || fresh != 1 {
		t.Fatalf("%d rows written, %d calls not replayed; want 1 and 1: %q", rows, fresh, results)
	}
}

// TestKeysetOfTypedColumns pages on DECIMAL, DATETIME and text keys: the
// cursor binds each value again as its own type.
func TestKeysetOfTypedColumns(t *testing.T) {
	f := setup(t)
	f.exec(t, `CREATE TABLE ledger AS SELECT seq AS id, CAST((seq % 7) * 0.1 AS DECIMAL(10,2)) AS amount,
		TIMESTAMPADD(MICROSECOND, (seq % 5) * 1500, '2026-01-01 00:00:00.000') AS at, CONCAT('k', seq % 3) AS k
		FROM seq_1_to_95`)
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
