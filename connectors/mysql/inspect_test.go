package mysql_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/sqlbase"
	"github.com/legate-mcp/legate/connectors/sqlbase/sqltest"
)

// toolCases hold a test of each tool against the real database;
// TestReadmeTasks checks that every tool the README's task table names has
// one.
var toolCases = map[string]func(t *testing.T){
	"query":          TestQueryTypedRows,
	"schema":         TestSchemaListsTables,
	"execute":        TestExecuteWritesOnce,
	"describe_table": TestDescribeTable,
	"sample_table":   TestSampleTable,
	"explain":        TestExplain,
	"top_queries":    TestTopQueries,
	"health":         TestHealth,
}

func (f *fixture) orders(t *testing.T) {
	t.Helper()
	f.exec(t, "CREATE TABLE customers (id INT PRIMARY KEY, email VARCHAR(100) NOT NULL UNIQUE) ENGINE=InnoDB")
	f.exec(t, `CREATE TABLE orders (
		id BIGINT AUTO_INCREMENT PRIMARY KEY,
		customer_id INT NOT NULL,
		total DECIMAL(10,2) DEFAULT 0 CHECK (total >= 0),
		note VARCHAR(50),
		placed_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
		CONSTRAINT orders_note_u UNIQUE (customer_id, note),
		CONSTRAINT orders_customer FOREIGN KEY (customer_id) REFERENCES customers (id) ON DELETE CASCADE,
		KEY orders_placed (placed_at)) ENGINE=InnoDB`)
	f.exec(t, "INSERT INTO customers SELECT seq, CONCAT('c', seq, '@example.com') FROM seq_1_to_10")
	f.exec(t, "INSERT INTO orders (customer_id, total, note) SELECT 1 + seq % 10, seq % 1000, CONCAT('n', seq) FROM seq_1_to_2000")
	f.exec(t, "ANALYZE TABLE orders")
}

func TestDescribeTable(t *testing.T) {
	f := setup(t)
	f.orders(t)
	c := f.connector(t, "", "")
	raw, err := sqltest.Call(t, c, "describe_table", `{"table": "orders"}`, "")
	if err != nil {
		t.Fatal(err)
	}
	got := decode[sqlbase.TableDescription](t, raw)
	var cols []string
	for _, c := range got.Columns {
		d := "-"
		if c.Default != nil {
			d = *c.Default
		}
		cols = append(cols, fmt.Sprintf("%s %s %v %s", c.Name, c.Type, c.Nullable, d))
	}
	want := []string{"id bigint(20) false -", "customer_id int(11) false -", "total decimal(10,2) true 0.00",
		"note varchar(50) true -", "placed_at datetime false current_timestamp()"}
	if strings.Join(cols, "|") != strings.Join(want, "|") {
		t.Errorf("columns\n got %q\nwant %q", cols, want)
	}
	if got.Schema != f.db || got.Kind != "table" || mustJSON(got.PrimaryKey) != `["id"]` || got.RowEstimate == nil || *got.RowEstimate <= 0 {
		t.Errorf("table %s kind %s primary key %v estimate %v", got.Schema, got.Kind, got.PrimaryKey, got.RowEstimate)
	}
	wantFK := fmt.Sprintf(`[{"name":"orders_customer","columns":["customer_id"],"ref_schema":"%s","ref_table":"customers",`+
		`"ref_columns":["id"],"on_update":"RESTRICT","on_delete":"CASCADE"}]`, f.db)
	if b := mustJSON(got.ForeignKeys); b != wantFK {
		t.Errorf("foreign keys\n got %s\nwant %s", b, wantFK)
	}
	idx := map[string]string{}
	for _, ix := range got.Indexes {
		idx[ix.Name] = fmt.Sprintf("%v %v %v %s", ix.Columns, ix.Unique, ix.Primary, ix.Method)
	}
	wantIdx := map[string]string{"PRIMARY": "[id] true true BTREE", "orders_note_u": "[customer_id note] true false BTREE",
		"orders_placed": "[placed_at] false false BTREE"}
	if fmt.Sprint(idx) != fmt.Sprint(wantIdx) {
		t.Errorf("indexes\n got %v\nwant %v", idx, wantIdx)
	}
	if len(got.Checks) != 1 || !strings.Contains(got.Checks[0].Definition, "`total` >= 0") {
		t.Errorf("checks %+v", got.Checks)
	}
	if b := mustJSON(got.Uniques); b != `[{"name":"orders_note_u","columns":["customer_id","note"]}]` {
		t.Errorf("uniques %s", b)
	}

	// A user that may read customers only sees no orders.
	user := "legate_desc_" + randHex()
	t.Cleanup(func() { f.admin.Exec("DROP USER IF EXISTS " + user + "@'%'") })
	f.exec(t, "CREATE USER "+user+"@'%'")
	f.exec(t, "GRANT SELECT ON "+f.db+".customers TO "+user+"@'%'")
	rc := f.connector(t, user, "read_only: true\n")
	if _, err := sqltest.Call(t, rc, "describe_table", `{"table": "orders"}`, ""); sqltest.Code(err) != legate.CodeNotFound {
		t.Errorf("describe_table of a table the user cannot see: %v, want NOT_FOUND", err)
	}
	raw, err = sqltest.Call(t, rc, "describe_table", `{"table": "customers"}`, "")
	if err != nil || !strings.Contains(string(raw), `"uniques":[{"name":"email","columns":["email"]}]`) {
		t.Errorf("describe_table of a visible table: %s, %v", raw, err)
	}
	if _, err := sqltest.Call(t, c, "describe_table", `{"table": "user", "schema": "mysql"}`, ""); sqltest.Code(err) != legate.CodeInvalidArgument {
		t.Errorf("a database not the instance's: %v", err)
	}
}

func TestSampleTable(t *testing.T) {
	f := setup(t)
	f.orders(t)
	c := f.connector(t, "", "max_rows: 50\ndefault_rows: 20\n")
	raw, err := sqltest.Call(t, c, "sample_table", `{"table": "orders", "limit": 5}`, "")
	if err != nil {
		t.Fatal(err)
	}
	if res := decode[queryResult](t, raw); res.Count != 5 || len(res.Rows) != 5 || !res.More || len(res.Columns) != 5 {
		t.Errorf("sample of 5: %s", raw)
	}
	raw, err = sqltest.Call(t, c, "sample_table", fmt.Sprintf(`{"table": "customers", "schema": %q}`, f.db), "")
	if res := decode[queryResult](t, raw); err != nil || res.Count != 10 || res.More {
		t.Errorf("default sample of a 10-row table: %s, %v", raw, err)
	}
	before := f.state(t)
	for name, args := range map[string]string{
		"over max_rows":      `{"table": "orders", "limit": 51}`,
		"schema not allowed": `{"table": "user", "schema": "mysql"}`,
		"no table":           `{"table": ""}`,
		"backquote in name":  "{\"table\": \"orders` ; DELETE FROM legate_canary; -- \"}",
		"no such table":      `{"table": "legate_nothing"}`,
	} {
		_, err := sqltest.Call(t, c, "sample_table", args, "")
		if code := sqltest.Code(err); code != legate.CodeInvalidArgument && code != legate.CodeNotFound {
			t.Errorf("%s: %v, want INVALID_ARGUMENT or NOT_FOUND", name, err)
		}
	}
	if f.state(t) != before {
		t.Fatal("the canary changed")
	}
}

func TestExplain(t *testing.T) {
	f := setup(t)
	f.orders(t)
	c := f.connector(t, "", "")
	raw, err := sqltest.Call(t, c, "explain", `{"sql": "SELECT * FROM orders WHERE id = ?", "params": [7]}`, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"format":"json"`) || !strings.Contains(string(raw), `"query_block"`) ||
		!strings.Contains(string(raw), `"key":"PRIMARY"`) {
		t.Errorf("json plan of a lookup by key: %s", raw)
	}
	raw, err = sqltest.Call(t, c, "explain", `{"sql": "SELECT * FROM orders WHERE placed_at > NOW()", "format": "text"}`, "")
	var text struct{ Plan []map[string]any }
	if json.Unmarshal(raw, &text); err != nil || len(text.Plan) != 1 || text.Plan[0]["table"] != "orders" {
		t.Errorf("text plan: %s, %v", raw, err)
	}
	_, err = sqltest.Call(t, c, "explain", `{"sql": "SELECT COUNT(*) FROM orders", "analyze": true}`, "")
	if sqltest.Code(err) != legate.CodePermissionDenied || !strings.Contains(err.Error(), "allow_explain_analyze") {
		t.Errorf("analyze on an instance that does not allow it: %v", err)
	}
	ca := f.connector(t, "", "allow_explain_analyze: true\n")
	raw, err = sqltest.Call(t, ca, "explain", `{"sql": "SELECT COUNT(*) FROM orders WHERE total > 10", "analyze": true}`, "")
	if err != nil || !strings.Contains(string(raw), `"analyzed":true`) || !strings.Contains(string(raw), `"r_rows"`) {
		t.Errorf("explain analyze: %s, %v", raw, err)
	}
}

// TestExplainBypassCorpus runs the whole bypass corpus (explain's own
// cases among them) through explain with analyze allowed, which runs what
// it plans: what the guard refuses to query it refuses to explain, and the
// canary never changes.
func TestExplainBypassCorpus(t *testing.T) {
	f := setup(t)
	c := f.connector(t, "", "allow_explain_analyze: true\nstatement_timeout: 2s\n")
	before := f.state(t)
	for _, tc := range sqltest.Bypasses(sqlbase.MySQL) {
		args, _ := json.Marshal(map[string]any{"sql": sqltest.Fill(tc.SQL, "legate_canary", "/tmp/legate_pwned_"+f.db), "analyze": true})
		_, err := sqltest.Call(t, c, "explain", string(args), "")
		if tc.Outcome == sqltest.Refused && (sqltest.Code(err) != legate.CodeInvalidArgument || !strings.Contains(err.Error(), "sql guard")) {
			t.Errorf("%s: explain did not refuse it: %v", tc.Name, err)
		}
		if got := f.state(t); got != before {
			t.Fatalf("%s: the canary changed: %s → %s", tc.Name, before, got)
		}
	}
}

func TestTopQueries(t *testing.T) {
	f := setup(t)
	c := f.connector(t, "", "")
	if _, err := sqltest.Call(t, c, "top_queries", `{"order_by": "rows"}`, ""); sqltest.Code(err) != legate.CodeInvalidArgument {
		t.Errorf("order_by rows: %v", err)
	}
	var on int
	f.admin.QueryRow("SELECT @@performance_schema").Scan(&on)
	if on != 1 {
		_, err := sqltest.Call(t, c, "top_queries", `{}`, "")
		if sqltest.Code(err) != legate.CodeNotFound || !strings.Contains(err.Error(), "performance_schema=ON") {
			t.Fatalf("top_queries with performance_schema off: %v, want NOT_FOUND naming it", err)
		}
		return
	}
	// Sent as text, as MariaDB's digests count them.
	for range 7 {
		f.exec(t, "SELECT COUNT(*) AS legate_top FROM legate_canary WHERE id > 3")
	}
	raw, err := sqltest.Call(t, c, "top_queries", `{"order_by": "calls", "limit": 100}`, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range decode[sqlbase.TopQueriesResult](t, raw).Queries {
		if strings.Contains(q.Query, "legate_top") && q.Calls >= 7 {
			return
		}
	}
	t.Fatalf("the statement run 7 times is not listed: %s", raw)
}

func TestHealth(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	c := f.connector(t, "", "")
	// A session holding a row lock, another waiting on it, a third asleep.
	holder, waiter, sleeper := f.conn(t), f.conn(t), f.conn(t)
	tx, err := holder.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec("UPDATE legate_canary SET v = v WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	var holderID, waiterID, sleeperID int64
	for _, id := range []struct {
		row *sql.Row
		to  *int64
	}{
		{tx.QueryRow("SELECT CONNECTION_ID()"), &holderID},
		{waiter.QueryRowContext(ctx, "SELECT CONNECTION_ID()"), &waiterID},
		{sleeper.QueryRowContext(ctx, "SELECT CONNECTION_ID()"), &sleeperID},
	} {
		if err := id.row.Scan(id.to); err != nil {
			t.Fatalf("a session's id: %v", err)
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	var waitErr, sleepErr error
	waited, slept := make(chan struct{}), make(chan struct{})
	go func() {
		_, waitErr = waiter.ExecContext(wctx, "UPDATE legate_canary SET v = v WHERE id = 1")
		close(waited)
	}()
	go func() {
		_, sleepErr = sleeper.ExecContext(wctx, "SELECT SLEEP(600) AS legate_sleeper")
		close(slept)
	}()
	defer func() {
		f.admin.Exec(fmt.Sprintf("KILL QUERY %d", sleeperID))
		tx.Rollback()
		cancel()
		<-waited
		<-slept
	}()
	f.waitFor(t, fmt.Sprintf("SELECT COUNT(*) = 1 FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = %d AND trx_state = 'LOCK WAIT'", waiterID),
		ended(waited, "the waiting UPDATE", &waitErr))
	f.waitFor(t, fmt.Sprintf("SELECT COUNT(*) = 1 FROM information_schema.PROCESSLIST WHERE ID = %d AND INFO LIKE '%%legate_sleeper%%'", sleeperID),
		ended(slept, "the sleeping SELECT", &sleepErr))

	raw, err := sqltest.Call(t, c, "health", `{"min_seconds": 0}`, "")
	if err != nil {
		t.Fatal(err)
	}
	h := decode[sqlbase.HealthResult](t, raw)
	if h.CacheHitRatio == nil || *h.CacheHitRatio <= 0 || *h.CacheHitRatio > 1 {
		t.Errorf("buffer pool hit ratio %v", h.CacheHitRatio)
	}
	found := false
	for _, a := range h.LongRunning {
		found = found || a.ID == sleeperID && strings.Contains(a.Query, "legate_sleeper")
	}
	if !found {
		t.Errorf("the sleeping statement is not long-running: %+v", h.LongRunning)
	}
	found = false
	for _, a := range h.Blocked {
		found = found || a.ID == waiterID && len(a.BlockedBy) == 1 && a.BlockedBy[0] == holderID
	}
	if !found {
		t.Errorf("session %d blocked by %d is not reported: %+v", waiterID, holderID, h.Blocked)
	}
	if h.Replication.Role != "standalone" || h.Replication.Note == "" {
		t.Errorf("replication of a standalone server: %+v", h.Replication)
	}
	raw, _ = sqltest.Call(t, c, "health", `{"min_seconds": 100000}`, "")
	if h := decode[sqlbase.HealthResult](t, raw); len(h.LongRunning) != 0 {
		t.Errorf("min_seconds 100000: %+v", h.LongRunning)
	}
}

// TestHealthOfAnUnprivilegedUser: what a user without PROCESS and
// SLAVE MONITOR may not read becomes a note naming the privilege, and the
// rest still answers; with them, there is nothing to note.
func TestHealthOfAnUnprivilegedUser(t *testing.T) {
	f := setup(t)
	user := "legate_health_" + randHex()
	t.Cleanup(func() { f.admin.Exec("DROP USER IF EXISTS " + user + "@'%'") })
	f.exec(t, "CREATE USER "+user+"@'%'")
	f.exec(t, "GRANT SELECT ON "+f.db+".* TO "+user+"@'%'")
	c := f.connector(t, user, "read_only: true\n")
	raw, err := sqltest.Call(t, c, "health", `{}`, "")
	if err != nil {
		t.Fatal(err)
	}
	h := decode[sqlbase.HealthResult](t, raw)
	notes := strings.Join(h.Notes, "\n")
	for _, want := range []string{"lock waits: ", "PROCESS", "replication: ", "SLAVE MONITOR"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q do not say %q", notes, want)
		}
	}
	if h.CacheHitRatio == nil {
		t.Errorf("the buffer pool hit ratio, which any user may read, is missing: %s", raw)
	}
	// The README's monitoring grants leave no note, and a read_only
	// instance starts on them.
	f.exec(t, "GRANT PROCESS, SLAVE MONITOR ON *.* TO "+user+"@'%'")
	c = f.connector(t, user, "read_only: true\n")
	raw, err = sqltest.Call(t, c, "health", `{}`, "")
	if h := decode[sqlbase.HealthResult](t, raw); err != nil || len(h.Notes) != 0 {
		t.Errorf("health with the monitoring grants: %s, %v", raw, err)
	}
}

// TestInspectionOnARefusedInstance: the new tools go through the same
// user check as query: a read_only instance on root answers none.
func TestInspectionOnARefusedInstance(t *testing.T) {
	f := setup(t)
	c := f.connector(t, "", "read_only: true\n")
	for name, args := range map[string]string{
		"describe_table": `{"table": "legate_canary"}`, "sample_table": `{"table": "legate_canary"}`,
		"explain": `{"sql": "SELECT 1"}`, "top_queries": `{}`, "health": `{}`,
	} {
		if _, err := sqltest.Call(t, c, name, args, ""); sqltest.Code(err) != legate.CodePermissionDenied {
			t.Errorf("%s on a refused instance: %v, want PERMISSION_DENIED", name, err)
		}
	}
	if err := c.Test(context.Background(), connectortest.Creds{}); sqltest.Code(err) != legate.CodePermissionDenied {
		t.Errorf("Test: %v", err)
	}
}

// conn takes a connection of its own to the fixture's database.
func (f *fixture) conn(t *testing.T) *sql.Conn {
	t.Helper()
	conn, err := f.admin.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// ended says, once done is closed, that the statement named what ended
// with *err; "" before.
func ended(done <-chan struct{}, what string, err *error) func() string {
	return func() string {
		select {
		case <-done:
			return fmt.Sprintf("%s ended: %v", what, *err)
		default:
			return ""
		}
	}
}

// waitFor polls cond (a query giving one boolean) until it holds, every
// 150 ms: MariaDB refills the cache behind information_schema.INNODB_TRX
// only when it was last read more than 100 ms before, so a faster poll
// reads the same stale rows forever (a CI run hung so, ten minutes, on a
// waiter its first read came too early to see). It fails the test, with
// the server's transactions and sessions, when the statement it waits on
// ends first (gone says so) or after a minute.
func (f *fixture) waitFor(t *testing.T, cond string, gone func() string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var ok bool
		if err := f.admin.QueryRow(cond).Scan(&ok); err != nil {
			t.Fatalf("%s: %v", cond, err)
		}
		if ok {
			return
		}
		why := gone()
		if why == "" && time.Now().After(deadline) {
			why = "a minute passed"
		}
		if why != "" {
			t.Fatalf("%s never held (%s); transactions %s; sessions %s", cond, why,
				f.rows(t, "SELECT trx_mysql_thread_id, trx_state, trx_query FROM information_schema.INNODB_TRX"),
				f.rows(t, "SELECT ID, COMMAND, STATE, INFO FROM information_schema.PROCESSLIST"))
		}
		time.Sleep(150 * time.Millisecond)
	}
}

// rows is what query gives, each row's columns as text, for a failure's
// message.
func (f *fixture) rows(t *testing.T, query string) string {
	rs, err := f.admin.Query(query)
	if err != nil {
		return err.Error()
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var out []string
	for rs.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		rs.Scan(ptrs...)
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
		}
		out = append(out, "["+strings.Join(row, " | ")+"]")
	}
	return strings.Join(out, " ")
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
