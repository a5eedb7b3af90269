package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/sqlbase"
	"github.com/legate-mcp/legate/connectors/sqlbase/sqltest"
)

// toolCases hold a test of each tool against the real database;
// TestReadmeTasks checks that every tool the README's task table names has
// one, and TestEveryTool runs them.
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

// ordersSchema is a table with every kind of thing describe_table
// reports.
const ordersSchema = `
CREATE TABLE customers (id int PRIMARY KEY, email text NOT NULL UNIQUE);
CREATE TABLE orders (
  id bigserial PRIMARY KEY,
  customer_id int NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
  total numeric(10,2) DEFAULT 0 CHECK (total >= 0),
  note text,
  placed_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT orders_note_u UNIQUE (customer_id, note));
CREATE INDEX orders_lower_note ON orders USING hash (lower(note));
CREATE INDEX orders_placed ON orders (placed_at);
INSERT INTO customers SELECT g, 'c' || g || '@example.com' FROM generate_series(1, 10) g;
INSERT INTO orders (customer_id, total, note) SELECT 1 + g % 10, g % 1000, 'n' || g FROM generate_series(1, 10000) g;
ANALYZE orders;`

func TestDescribeTable(t *testing.T) {
	f := setup(t)
	f.exec(t, ordersSchema)
	c := f.connector(t, "", "")
	raw, err := sqltest.Call(t, c, "describe_table", `{"table": "orders"}`, "")
	if err != nil {
		t.Fatal(err)
	}
	got := decode[sqlbase.TableDescription](t, raw)
	def := func(s string) *string { return &s }
	wantCols := []sqlbase.DescribedColumn{
		{Name: "id", Type: "bigint", Default: def("nextval('orders_id_seq'::regclass)")},
		{Name: "customer_id", Type: "integer"},
		{Name: "total", Type: "numeric(10,2)", Nullable: true, Default: def("0")},
		{Name: "note", Type: "text", Nullable: true},
		{Name: "placed_at", Type: "timestamp with time zone", Default: def("now()")},
	}
	if b, w := mustJSON(got.Columns), mustJSON(wantCols); b != w {
		t.Errorf("columns\n got %s\nwant %s", b, w)
	}
	if got.Schema != "public" || got.Name != "orders" || got.Kind != "table" || mustJSON(got.PrimaryKey) != `["id"]` {
		t.Errorf("table %s.%s kind %s, primary key %v", got.Schema, got.Name, got.Kind, got.PrimaryKey)
	}
	wantFK := `[{"name":"orders_customer_id_fkey","columns":["customer_id"],"ref_schema":"public","ref_table":"customers",` +
		`"ref_columns":["id"],"on_update":"NO ACTION","on_delete":"CASCADE"}]`
	if b := mustJSON(got.ForeignKeys); b != wantFK {
		t.Errorf("foreign keys\n got %s\nwant %s", b, wantFK)
	}
	wantIdx := `[{"name":"orders_lower_note","columns":["lower(note)"],"unique":false,"primary":false,"method":"hash"},` +
		`{"name":"orders_note_u","columns":["customer_id","note"],"unique":true,"primary":false,"method":"btree"},` +
		`{"name":"orders_pkey","columns":["id"],"unique":true,"primary":true,"method":"btree"},` +
		`{"name":"orders_placed","columns":["placed_at"],"unique":false,"primary":false,"method":"btree"}]`
	if b := mustJSON(got.Indexes); b != wantIdx {
		t.Errorf("indexes\n got %s\nwant %s", b, wantIdx)
	}
	if len(got.Checks) != 1 || got.Checks[0].Name != "orders_total_check" || got.Checks[0].Definition != "CHECK (total >= 0::numeric)" ||
		mustJSON(got.Checks[0].Columns) != `["total"]` {
		t.Errorf("checks %+v", got.Checks)
	}
	if b := mustJSON(got.Uniques); b != `[{"name":"orders_note_u","columns":["customer_id","note"]}]` {
		t.Errorf("uniques %s", b)
	}
	if got.RowEstimate == nil || *got.RowEstimate != 10000 {
		t.Errorf("row estimate %v, want 10000 after ANALYZE", got.RowEstimate)
	}

	// A role that may read customers only sees no orders; a schema
	// outside the instance's is refused before any I/O.
	role := "legate_desc_" + randHex()
	f.exec(t, "CREATE ROLE "+role+" LOGIN")
	t.Cleanup(func() {
		f.admin.Exec(context.Background(), "DROP OWNED BY "+role)
		f.admin.Exec(context.Background(), "DROP ROLE IF EXISTS "+role)
	})
	f.exec(t, "GRANT SELECT ON customers TO "+role)
	rc := f.connector(t, role, "read_only: true\n")
	if _, err := sqltest.Call(t, rc, "describe_table", `{"table": "orders"}`, ""); sqltest.Code(err) != legate.CodeNotFound ||
		!strings.Contains(err.Error(), "may read") {
		t.Errorf("describe_table of a table the role cannot read: %v, want NOT_FOUND", err)
	}
	raw, err = sqltest.Call(t, rc, "describe_table", `{"table": "customers"}`, "")
	if err != nil || !strings.Contains(string(raw), `"uniques":[{"name":"customers_email_key","columns":["email"]}]`) {
		t.Errorf("describe_table of a readable table: %s, %v", raw, err)
	}
	if _, err := sqltest.Call(t, c, "describe_table", `{"table": "orders", "schema": "pg_catalog"}`, ""); sqltest.Code(err) != legate.CodeInvalidArgument {
		t.Errorf("a schema not the instance's: %v", err)
	}
	// A view has columns and no row estimate.
	f.exec(t, "CREATE VIEW big_orders AS SELECT id, total FROM orders WHERE total > 50")
	raw, err = sqltest.Call(t, c, "describe_table", `{"table": "big_orders"}`, "")
	if v := decode[sqlbase.TableDescription](t, raw); err != nil || v.Kind != "view" || v.RowEstimate != nil || len(v.Columns) != 2 {
		t.Errorf("describe_table of a view: %s, %v", raw, err)
	}
}

func TestSampleTable(t *testing.T) {
	f := setup(t)
	f.exec(t, ordersSchema)
	c := f.connector(t, "", "max_rows: 50\ndefault_rows: 20\n")
	raw, err := sqltest.Call(t, c, "sample_table", `{"table": "orders", "limit": 5}`, "")
	if err != nil {
		t.Fatal(err)
	}
	res := decode[queryResult](t, raw)
	if res.Count != 5 || len(res.Rows) != 5 || !res.More || len(res.Columns) != 5 || res.Columns[2].Type != "numeric" {
		t.Errorf("sample of 5: %s", raw)
	}
	raw, err = sqltest.Call(t, c, "sample_table", `{"table": "customers", "schema": "public"}`, "")
	if res := decode[queryResult](t, raw); err != nil || res.Count != 10 || res.More {
		t.Errorf("default sample of a 10-row table: %s, %v", raw, err)
	}
	before := f.state(t)
	for name, args := range map[string]string{
		"over max_rows":        `{"table": "orders", "limit": 51}`,
		"negative limit":       `{"table": "orders", "limit": -1}`,
		"schema not allowed":   `{"table": "pg_authid", "schema": "pg_catalog"}`,
		"no table":             `{"table": ""}`,
		"quote in a name":      `{"table": "orders\" ; DELETE FROM legate_canary; --"}`,
		"quote in a schema":    `{"table": "x", "schema": "public\".legate_canary --"}`,
		"a table of no schema": `{"table": "legate_nothing"}`,
	} {
		_, err := sqltest.Call(t, c, "sample_table", args, "")
		if code := sqltest.Code(err); code != legate.CodeInvalidArgument && code != legate.CodeNotFound {
			t.Errorf("%s: %v, want INVALID_ARGUMENT or NOT_FOUND", name, err)
		}
	}
	if f.state(t) != before {
		t.Fatal("the canary changed")
	}
	// A role without SELECT on the table gets the server's refusal.
	role := "legate_sample_" + randHex()
	f.exec(t, "CREATE ROLE "+role+" LOGIN")
	t.Cleanup(func() { f.admin.Exec(context.Background(), "DROP ROLE IF EXISTS "+role) })
	rc := f.connector(t, role, "read_only: true\n")
	if _, err := sqltest.Call(t, rc, "sample_table", `{"table": "orders"}`, ""); sqltest.Code(err) != legate.CodePermissionDenied {
		t.Errorf("sample of a table the role may not read: %v, want PERMISSION_DENIED", err)
	}
}

func TestExplain(t *testing.T) {
	f := setup(t)
	f.exec(t, ordersSchema)
	c := f.connector(t, "", "")
	raw, err := sqltest.Call(t, c, "explain", `{"sql": "SELECT * FROM orders WHERE id = $1", "params": [7]}`, "")
	if err != nil {
		t.Fatal(err)
	}
	var plan struct {
		Format   string
		Analyzed bool
		Plan     []struct {
			Plan map[string]any
		}
	}
	if err := json.Unmarshal(raw, &plan); err != nil || plan.Format != "json" || plan.Analyzed || len(plan.Plan) != 1 ||
		plan.Plan[0].Plan["Index Name"] != "orders_pkey" {
		t.Errorf("json plan of a lookup by key: %s", raw)
	}
	raw, err = sqltest.Call(t, c, "explain", `{"sql": "SELECT count(*) FROM orders", "format": "text"}`, "")
	var text struct{ Plan []string }
	if json.Unmarshal(raw, &text); err != nil || len(text.Plan) < 2 || !strings.HasPrefix(text.Plan[0], "Aggregate") {
		t.Errorf("text plan: %s, %v", raw, err)
	}
	// analyze runs the statement: refused unless the operator allows it.
	_, err = sqltest.Call(t, c, "explain", `{"sql": "SELECT count(*) FROM orders", "analyze": true}`, "")
	if sqltest.Code(err) != legate.CodePermissionDenied || !strings.Contains(err.Error(), "allow_explain_analyze") {
		t.Errorf("analyze on an instance that does not allow it: %v", err)
	}
	ca := f.connector(t, "", "allow_explain_analyze: true\n")
	raw, err = sqltest.Call(t, ca, "explain", `{"sql": "SELECT count(*) FROM orders", "analyze": true}`, "")
	if err != nil || !strings.Contains(string(raw), `"Actual Rows":1`) || !strings.Contains(string(raw), `"analyzed":true`) {
		t.Errorf("explain analyze: %s, %v", raw, err)
	}
	// What analyze runs is bounded by statement_timeout.
	slow := f.connector(t, "", "allow_explain_analyze: true\nstatement_timeout: 100ms\n")
	// Its pool connected first: on a loaded machine, connecting within the
	// call could outlast the client's grace before the server's timeout.
	if _, err := sqltest.Call(t, slow, "explain", `{"sql": "SELECT 1"}`, ""); err != nil {
		t.Fatal(err)
	}
	_, err = sqltest.Call(t, slow, "explain", `{"sql": "`+slowSQL+`", "analyze": true}`, "")
	if sqltest.Code(err) != legate.CodeTransient || !strings.Contains(err.Error(), "statement timeout") {
		t.Errorf("explain analyze past statement_timeout: %v, want TRANSIENT", err)
	}
	if _, err := sqltest.Call(t, ca, "explain", `{"sql": "SELECT 1", "format": "yaml"}`, ""); sqltest.Code(err) != legate.CodeInvalidArgument {
		t.Errorf("format yaml: %v", err)
	}
}

// TestExplainBypassCorpus runs the whole bypass corpus (explain's own
// cases among them) through explain with analyze allowed, which runs what it plans:
// what the guard refuses to query it refuses to explain, and the canary
// never changes.
func TestExplainBypassCorpus(t *testing.T) {
	f := setup(t)
	f.extensions(t, "dblink", "tablefunc", "xml2")
	c := f.connector(t, "", "allow_explain_analyze: true\nstatement_timeout: 2s\n")
	before := f.state(t)
	for _, tc := range sqltest.Bypasses(sqlbase.Postgres) {
		sql := strings.NewReplacer("{canary}", "legate_canary", "{file}", "/tmp/legate_pwned", "{prog}", "touch /tmp/legate_pwned").Replace(tc.SQL)
		args, _ := json.Marshal(map[string]any{"sql": sql, "analyze": true})
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
	_, err := sqltest.Call(t, c, "top_queries", `{}`, "")
	if sqltest.Code(err) != legate.CodeNotFound || !strings.Contains(err.Error(), "CREATE EXTENSION pg_stat_statements") {
		t.Fatalf("top_queries without the extension: %v, want NOT_FOUND naming it", err)
	}
	if _, err := sqltest.Call(t, c, "top_queries", `{"order_by": "rows"}`, ""); sqltest.Code(err) != legate.CodeInvalidArgument {
		t.Errorf("order_by rows: %v", err)
	}
	if _, err := f.admin.Exec(context.Background(), "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		sqltest.Unavailable(t, "pg_stat_statements (postgresql-contrib)", urlEnv, err)
	}
	var preload string
	f.admin.QueryRow(context.Background(), "SHOW shared_preload_libraries").Scan(&preload)
	if !strings.Contains(preload, "pg_stat_statements") {
		// Installed, not loaded: the view exists but cannot be read.
		_, err := sqltest.Call(t, c, "top_queries", `{}`, "")
		if sqltest.Code(err) != legate.CodeNotFound || !strings.Contains(err.Error(), "not loaded") ||
			!strings.Contains(err.Error(), "shared_preload_libraries") {
			t.Fatalf("top_queries with the extension not preloaded: %v, want NOT_FOUND naming shared_preload_libraries", err)
		}
		return
	}
	topQueriesLoaded(t, c)
}

func TestHealth(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	c := f.connector(t, "", "")
	slot := "legate_t_" + randHex()
	f.exec(t, "SELECT pg_create_physical_replication_slot($1)", slot)
	t.Cleanup(func() { f.admin.Exec(ctx, "SELECT pg_drop_replication_slot($1)", slot) })

	// A table nine tenths of whose rows are deleted and never vacuumed,
	// analyzed: its pages hold ten times what the live rows need.
	f.exec(t, "CREATE TABLE bloated (id int, pad text) WITH (autovacuum_enabled = off)")
	f.exec(t, "INSERT INTO bloated SELECT g, repeat('x', 200) FROM generate_series(1, 2000) g")
	f.exec(t, "DELETE FROM bloated WHERE id > 200")
	f.exec(t, "ANALYZE bloated")
	f.exec(t, "CREATE TABLE tight (id int, pad text)")
	f.exec(t, "INSERT INTO tight SELECT g, repeat('x', 200) FROM generate_series(1, 2000) g")
	f.exec(t, "ANALYZE tight")

	// A session that holds a row lock, another waiting on it, a third
	// asleep in a long statement.
	holder, waiter, sleeper := f.conn(t), f.conn(t), f.conn(t)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "UPDATE legate_canary SET v = v WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	var holderPID, waiterPID, sleeperPID int64
	holder.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&holderPID)
	waiter.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&waiterPID)
	sleeper.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&sleeperPID)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{}, 2)
	go func() { waiter.Exec(wctx, "UPDATE legate_canary SET v = v WHERE id = 1"); done <- struct{}{} }()
	go func() { sleeper.Exec(wctx, "SELECT pg_sleep(600) /* legate-sleeper */"); done <- struct{}{} }()
	defer func() { cancel(); <-done; <-done }()
	waitFor(t, f, fmt.Sprintf("SELECT count(*) = 2 FROM pg_stat_activity WHERE pid IN (%d, %d) AND wait_event IS NOT NULL AND state = 'active'", waiterPID, sleeperPID))

	raw, err := sqltest.Call(t, c, "health", `{"min_seconds": 0}`, "")
	if err != nil {
		t.Fatal(err)
	}
	h := decode[sqlbase.HealthResult](t, raw)
	if h.CacheHitRatio == nil || *h.CacheHitRatio <= 0 || *h.CacheHitRatio > 1 {
		t.Errorf("cache hit ratio %v", h.CacheHitRatio)
	}
	found := false
	for _, a := range h.LongRunning {
		found = found || a.ID == sleeperPID && strings.Contains(a.Query, "legate-sleeper") && a.WaitEvent == "Timeout:PgSleep"
	}
	if !found {
		t.Errorf("the sleeping statement is not long-running: %+v", h.LongRunning)
	}
	found = false
	for _, a := range h.Blocked {
		found = found || a.ID == waiterPID && len(a.BlockedBy) == 1 && a.BlockedBy[0] == holderPID && strings.HasPrefix(a.WaitEvent, "Lock:")
	}
	if !found {
		t.Errorf("session %d blocked by %d is not reported: %+v", waiterPID, holderPID, h.Blocked)
	}
	found = false
	for _, b := range h.Bloat {
		found = found || b.Table == "bloated" && b.EstimatedBytes > b.TableBytes*3/4 && b.Ratio > 0.75
		if b.Table == "tight" && b.Ratio > 0.25 {
			t.Errorf("a table with no dead rows is estimated %.0f%% bloated", b.Ratio*100)
		}
	}
	if !found {
		t.Errorf("the table with 90%% dead rows is not in bloat: %+v", h.Bloat)
	}
	found = false
	for _, s := range h.Replication.Slots {
		found = found || s.Name == slot && s.Type == "physical" && !s.Active
	}
	if h.Replication.Role != "primary" || !found {
		t.Errorf("replication with a slot: %+v", h.Replication)
	}
	// A long threshold leaves the sleeper out.
	raw, _ = sqltest.Call(t, c, "health", `{"min_seconds": 100000}`, "")
	if h := decode[sqlbase.HealthResult](t, raw); len(h.LongRunning) != 0 {
		t.Errorf("min_seconds 100000: %+v", h.LongRunning)
	}
}

// TestHealthWithMonitoringRole: a read_only instance starts on a role
// granted pg_monitor (the README's grant), and its health sees another
// role's long statement; without it, the statement's text is hidden.
func TestHealthWithMonitoringRole(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	role := "legate_mon_" + randHex()
	f.exec(t, "CREATE ROLE "+role+" LOGIN")
	t.Cleanup(func() { f.admin.Exec(ctx, "DROP ROLE IF EXISTS "+role) })
	sleeper := f.conn(t)
	var pid int64
	sleeper.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid)
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { sleeper.Exec(sctx, "SELECT pg_sleep(600) /* legate-monitored */"); close(done) }()
	defer func() { cancel(); <-done }()
	waitFor(t, f, fmt.Sprintf("SELECT count(*) = 1 FROM pg_stat_activity WHERE pid = %d AND wait_event = 'PgSleep'", pid))
	sees := func() bool {
		c := f.connector(t, role, "read_only: true\n")
		raw, err := sqltest.Call(t, c, "health", `{"min_seconds": 0}`, "")
		if err != nil {
			t.Fatalf("health as %s: %v", role, err)
		}
		for _, a := range decode[sqlbase.HealthResult](t, raw).LongRunning {
			if a.ID == pid && strings.Contains(a.Query, "legate-monitored") {
				return true
			}
		}
		return false
	}
	if sees() {
		t.Error("a role without pg_monitor sees another role's statement")
	}
	f.exec(t, "GRANT pg_monitor TO "+role)
	if !sees() {
		t.Error("a role granted pg_monitor does not see another role's long statement")
	}
}

// TestInspectionOnARefusedInstance: the new tools go through the same
// role check as query: a read_only instance on a superuser answers none.
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

// conn opens a connection of its own to the fixture's database.
func (f *fixture) conn(t *testing.T) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), fmt.Sprintf("host=%s port=%s dbname=%s user=%s sslmode=disable", f.host, f.port, f.db, f.user))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// waitFor polls cond (a query giving one boolean) until it holds; the
// test's own deadline bounds it.
func waitFor(t *testing.T, f *fixture, cond string) {
	t.Helper()
	for {
		var ok bool
		if err := f.admin.QueryRow(context.Background(), cond).Scan(&ok); err != nil {
			t.Fatalf("%s: %v", cond, err)
		}
		if ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// topQueriesLoaded is top_queries on a server that preloads
// pg_stat_statements (the shared server, or TestTopQueriesPreloaded's
// own): a statement run 7 times is listed with its calls.
func topQueriesLoaded(t *testing.T, c connectors.Connector) {
	t.Helper()
	for range 7 {
		if _, err := sqltest.Call(t, c, "query", `{"sql": "SELECT count(*) AS legate_top FROM legate_canary WHERE id > $1", "params": [3]}`, ""); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := sqltest.Call(t, c, "top_queries", `{"order_by": "calls", "limit": 100}`, "")
	if err != nil {
		t.Fatal(err)
	}
	res := decode[sqlbase.TopQueriesResult](t, raw)
	for _, q := range res.Queries {
		if strings.Contains(q.Query, "legate_top") && q.Calls >= 7 && q.Rows >= 7 {
			return
		}
	}
	t.Fatalf("the statement run 7 times is not listed: %s", raw)
}
