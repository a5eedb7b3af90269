// Package sqlbench is the harness's scenario P6: postgres.query of 100
// rows through Legate (the real binary, a go-sdk client, the whole call
// path) against the same query through pgx directly and the MCP hop
// alone, in the same rounds; it is judged against the bound of any
// gateway (benchkit.HopRows). Its database (CreateDatabase) and instance
// (Instance) serve P7b's PostgreSQL anchor too (saasbench).
// It lives apart from the harness's main package, which registers it in a
// few lines (p6.go).
//
// It needs the PostgreSQL server the tests use (LEGATE_TEST_POSTGRES_URL,
// default postgres://postgres@127.0.0.1:5432/postgres), creates a
// database of its own and drops it.
package sqlbench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
)

// Query is the statement both sides run: 100 rows of four typed columns.
const Query = "SELECT id, name, amount, created FROM bench ORDER BY id"

// Target is the least ratio of Legate's calls/s to the bound of any
// gateway (benchkit.HopRows), at every C: P6's headline. Against pgx
// directly the ratio is reported, not judged: no gateway can reach it.
const Target = 0.8

// Want is a value of the query's last row, which its answer must hold.
const Want = "customer 100"

const urlEnv = "LEGATE_TEST_POSTGRES_URL"

// Run measures P6.
func Run(ctx context.Context, o benchkit.Options) ([]benchkit.Row, error) {
	db, drop, err := CreateDatabase(ctx)
	if err != nil {
		return nil, fmt.Errorf("P6 needs PostgreSQL: %w", err)
	}
	defer drop()
	cs := o.Upto(8)
	maxC := slices.Max(cs)
	lg, err := benchkit.StartLegate(ctx, o, "p6", "connectors:\n"+Instance("pg", db, maxC))
	if err != nil {
		return nil, err
	}
	defer lg.Stop()
	sessions, err := lg.OpenSessions(ctx, maxC)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, s := range sessions {
			s.Close()
		}
	}()
	pcfg, err := pgxpool.ParseConfig(db.String())
	if err != nil {
		return nil, err
	}
	pcfg.MaxConns = int32(maxC)
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, err
	}
	defer pool.Close()

	first, err := benchkit.Call(ctx, sessions[0], "pg__query", map[string]any{"sql": Query})
	if err != nil {
		return nil, err
	}
	hop, err := benchkit.StartHop(ctx, o, "p6", first)
	if err != nil {
		return nil, err
	}
	defer hop.Stop()
	hopSessions, err := hop.OpenSessions(ctx, maxC)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, s := range hopSessions {
			s.Close()
		}
	}()

	sides := []benchkit.Side{
		{Name: "pgx", Call: func(ctx context.Context, i int) error { return direct(ctx, pool, false) }},
		{Name: "Legate", Call: func(ctx context.Context, i int) error { return viaLegate(ctx, sessions[i]) }, PID: lg.Cmd.Process.Pid},
		{Name: "pgx in a READ ONLY transaction", Call: func(ctx context.Context, i int) error { return direct(ctx, pool, true) }},
		{Name: "the MCP hop alone", Call: func(ctx context.Context, i int) error {
			_, err := benchkit.Call(ctx, hopSessions[i], benchkit.HopTool, nil)
			return err
		}, PID: hop.Cmd.Process.Pid},
	}
	res, err := benchkit.Rounds(ctx, o, "P6", sides, cs)
	if err != nil {
		return nil, err
	}
	var rows []benchkit.Row
	for _, c := range cs {
		rows = append(rows, rowsAt(c, c == cs[0], res[c][0], res[c][1], res[c][2], res[c][3])...)
	}
	return rows, nil
}

// rowsAt are P6's rows at C=c of pgx directly (d), through Legate (v),
// pgx in the connector's transaction (tx) and the MCP hop alone (h); only
// Legate against the bound is judged. first adds the note.
func rowsAt(c int, first bool, d, v, tx, h benchkit.Series) []benchkit.Row {
	note := ""
	if first {
		note = "postgres.query of 100 rows through Legate; baseline: the same query through pgx directly (reported, not judged: P6 is judged against the bound below)"
	}
	rows := benchkit.Compare("P6", "postgres.query of 100 rows", c, d, v, 0, note)
	rows = append(rows, benchkit.Row{Scenario: "P6", Metric: fmt.Sprintf("calls/s of pgx in the connector's transaction (BEGIN READ ONLY with SET LOCAL, query, ROLLBACK), C=%d (baseline: pgx directly)", c),
		Unit: "calls/s", Baseline: benchkit.Median(d.Rate), Legate: benchkit.Median(tx.Rate), Ratio: benchkit.Median(benchkit.Ratios(tx.Rate, d.Rate))})
	return append(rows, benchkit.HopRows("P6", "postgres.query of 100 rows", c, d, h, v, benchkit.HopTargets{Bound: Target})...)
}

// direct runs the query through pgx and reads every value, as the
// connector does; inTx adds the connector's transaction steps.
func direct(ctx context.Context, pool *pgxpool.Pool, inTx bool) error {
	var q interface {
		Query(context.Context, string, ...any) (pgx.Rows, error)
	} = pool
	if inTx {
		tx, err := pool.BeginTx(ctx, pgx.TxOptions{BeginQuery: `BEGIN READ ONLY; SET LOCAL statement_timeout = 10000; SET LOCAL search_path = "public"`})
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		q = tx
	}
	rows, err := q.Query(ctx, Query)
	if err != nil {
		return err
	}
	n := 0
	for rows.Next() {
		if _, err := rows.Values(); err != nil {
			return err
		}
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if n != 100 {
		return fmt.Errorf("pgx read %d rows, want 100", n)
	}
	return nil
}

// viaLegate calls pg__query through Legate and checks the row count.
func viaLegate(ctx context.Context, s *mcp.ClientSession) error {
	res, err := benchkit.Call(ctx, s, "pg__query", map[string]any{"sql": Query})
	if err != nil {
		return err
	}
	m, ok := res.StructuredContent.(map[string]any)
	if !ok || m["row_count"] != float64(100) {
		return fmt.Errorf("unexpected result: %v", res.StructuredContent)
	}
	return nil
}

// Instance is the list entry, under connectors:, of a read_only postgres
// instance named id on db, with up to maxConns connections.
func Instance(id string, db *url.URL, maxConns int) string {
	port := db.Port()
	if port == "" {
		port = "5432"
	}
	// The benchmark's role is the server's superuser (the DSN's), which a
	// read_only instance refuses without allow_privileged_role.
	return fmt.Sprintf("  - id: %s\n    type: postgres\n    config: {host: %q, port: %s, database: %q, user: %q, sslmode: disable, read_only: true, allow_privileged_role: true, max_conns: %d}\n",
		id, db.Hostname(), port, strings.TrimPrefix(db.Path, "/"), db.User.Username(), maxConns)
}

// CreateDatabase creates, on the server of LEGATE_TEST_POSTGRES_URL
// (default postgres://postgres@127.0.0.1:5432/postgres), a database with
// the bench table of Query, and returns its URL and a function that
// drops it.
func CreateDatabase(ctx context.Context) (*url.URL, func(), error) {
	raw := os.Getenv(urlEnv)
	if raw == "" {
		raw = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	root, err := pgx.Connect(ctx, raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (set %s to a server's URL)", err, urlEnv)
	}
	b := make([]byte, 6)
	rand.Read(b)
	name := "legate_bench_" + hex.EncodeToString(b)
	if _, err := root.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		root.Close(ctx)
		return nil, nil, err
	}
	drop := func() {
		root.Exec(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		root.Close(context.WithoutCancel(ctx))
	}
	u, _ := url.Parse(raw)
	u.Path = "/" + name
	conn, err := pgx.Connect(ctx, u.String())
	if err == nil {
		_, err = conn.Exec(ctx, `CREATE TABLE bench (id int PRIMARY KEY, name text NOT NULL, amount numeric(10,2) NOT NULL, created timestamptz NOT NULL);
			INSERT INTO bench SELECT g, 'customer ' || g, g * 1.25, '2026-11-30T12:00:00Z'::timestamptz + g * interval '1 minute' FROM generate_series(1, 100) g`)
		conn.Close(ctx)
	}
	if err != nil {
		drop()
		return nil, nil, err
	}
	return u, drop, nil
}
