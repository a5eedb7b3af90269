// Package sqlbench is the harness's scenario P6: postgres.query of 100
// rows through Legate (the real binary, a go-sdk client, the whole call
// path) against the same query through pgx directly, in the same rounds.
// It lives apart from the harness's main package, which is at its size
// ceiling; main registers it in a few lines (p6.go).
//
// It needs the PostgreSQL server the tests use (LEGATE_TEST_POSTGRES_URL,
// default postgres://postgres@127.0.0.1:5432/postgres), creates a
// database of its own and drops it.
package sqlbench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Row is one line of the results table; its fields are those of the
// harness's row, so main converts it with a plain conversion.
type Row struct {
	Scenario string  `json:"scenario"`
	Metric   string  `json:"metric"`
	Unit     string  `json:"unit"`
	Baseline float64 `json:"baseline"`
	Legate   float64 `json:"legate"`
	Ratio    float64 `json:"ratio"`
	Target   string  `json:"target"`
	Result   string  `json:"result"`
	Note     string  `json:"note,omitempty"`
}

// Options are the harness's settings.
type Options struct {
	// Legate is the legate binary; Dir a scratch directory.
	Legate, Dir    string
	Rounds         int
	Warmup, Window time.Duration
	// C are the concurrencies; those above 8 are left out.
	C    []int
	Logf func(format string, args ...any)
}

// Query is the statement both sides run: 100 rows of four typed columns.
const Query = "SELECT id, name, amount, created FROM bench ORDER BY id"

// Target is the least ratio of Legate's calls/s to pgx's.
const Target = 0.7

const urlEnv = "LEGATE_TEST_POSTGRES_URL"

// Run measures P6.
func Run(ctx context.Context, o Options) ([]Row, error) {
	raw := os.Getenv(urlEnv)
	if raw == "" {
		raw = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	db, drop, err := createDatabase(ctx, raw)
	if err != nil {
		return nil, fmt.Errorf("P6 needs PostgreSQL (set %s): %w", urlEnv, err)
	}
	defer drop()
	var cs []int
	for _, c := range o.C {
		if c <= 8 {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		cs = []int{1}
	}
	maxC := slices.Max(cs)

	lg, err := startLegate(ctx, o, db, maxC)
	if err != nil {
		return nil, err
	}
	defer lg.stop()
	sessions, err := openSessions(ctx, "http://"+lg.addr+"/mcp", maxC)
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

	sides := []side{
		{name: "pgx", call: func(ctx context.Context, i int) error { return direct(ctx, pool, false) }},
		{name: "Legate", call: func(ctx context.Context, i int) error { return viaLegate(ctx, sessions[i]) }, pid: lg.cmd.Process.Pid},
		{name: "pgx in a READ ONLY transaction", call: func(ctx context.Context, i int) error { return direct(ctx, pool, true) }},
	}
	type series struct{ rate, p50, cpu []float64 }
	res := map[int]*[3]series{}
	for r := range o.Rounds {
		for _, c := range cs {
			if res[c] == nil {
				res[c] = &[3]series{}
			}
			for k := range sides {
				s := (k + r) % len(sides) // rotate which goes first
				m, err := measure(ctx, sides[s], c, o.Warmup, o.Window)
				if err != nil {
					return nil, fmt.Errorf("P6 C=%d %s: %w", c, sides[s].name, err)
				}
				x := &res[c][s]
				x.rate, x.p50, x.cpu = append(x.rate, m.rate), append(x.p50, m.p50), append(x.cpu, m.cpu)
				o.Logf("P6 round %d C=%d %-30s %7.0f calls/s p50 %6.0f µs cpu/call %4.0f µs", r+1, c, sides[s].name, m.rate, m.p50, m.cpu)
			}
		}
	}
	var rows []Row
	for _, c := range cs {
		d, v, tx := res[c][0], res[c][1], res[c][2]
		rr := Row{Scenario: "P6", Metric: fmt.Sprintf("calls/s, C=%d", c), Unit: "calls/s", Baseline: median(d.rate),
			Legate: median(v.rate), Ratio: median(ratios(v.rate, d.rate)), Target: fmt.Sprintf("≥ %.1f× pgx", Target)}
		rr.Result = map[bool]string{true: "PASS", false: "FAIL"}[rr.Ratio >= Target]
		if c == cs[0] {
			rr.Note = "postgres.query of 100 rows through Legate; baseline: the same query through pgx directly"
		}
		rows = append(rows, rr,
			Row{Scenario: "P6", Metric: fmt.Sprintf("p50 latency, C=%d", c), Unit: "µs", Baseline: median(d.p50),
				Legate: median(v.p50), Ratio: median(ratios(v.p50, d.p50))},
			Row{Scenario: "P6", Metric: fmt.Sprintf("CPU per call, C=%d (baseline: the pgx client; Legate: its process, the client's CPU not counted)", c),
				Unit: "µs", Baseline: median(d.cpu), Legate: median(v.cpu), Ratio: median(ratios(v.cpu, d.cpu))},
			Row{Scenario: "P6", Metric: fmt.Sprintf("calls/s of pgx in the connector's transaction (BEGIN READ ONLY with SET LOCAL, query, ROLLBACK), C=%d (baseline: pgx directly)", c),
				Unit: "calls/s", Baseline: median(d.rate), Legate: median(tx.rate), Ratio: median(ratios(tx.rate, d.rate))},
		)
	}
	return rows, nil
}

// side is one way of running the query; pid, when set, is the process
// whose CPU is counted, else this one's.
type side struct {
	name string
	call func(ctx context.Context, worker int) error
	pid  int
}

type measurement struct{ rate, p50, cpu float64 }

// measure runs c workers in a closed loop: a warm-up, then the window.
func measure(ctx context.Context, s side, c int, warmup, window time.Duration) (measurement, error) {
	if _, err := loop(ctx, s, c, warmup); err != nil {
		return measurement{}, fmt.Errorf("warm-up: %w", err)
	}
	pid := s.pid
	if pid == 0 {
		pid = os.Getpid()
	}
	cpu0, err := cpuSeconds(pid)
	if err != nil {
		return measurement{}, err
	}
	start := time.Now()
	lat, err := loop(ctx, s, c, window)
	elapsed := time.Since(start)
	if err != nil {
		return measurement{}, err
	}
	cpu1, err := cpuSeconds(pid)
	if err != nil {
		return measurement{}, err
	}
	if len(lat) == 0 {
		return measurement{}, errors.New("no call completed")
	}
	return measurement{rate: float64(len(lat)) / elapsed.Seconds(), p50: float64(lat[len(lat)/2]) / 1e3,
		cpu: (cpu1 - cpu0) * 1e6 / float64(len(lat))}, nil
}

// loop calls on c workers until window has passed and returns the sorted
// latencies; any failed call fails the run.
func loop(ctx context.Context, s side, c int, window time.Duration) ([]time.Duration, error) {
	deadline := time.Now().Add(window)
	lats := make([][]time.Duration, c)
	errs := make([]error, c)
	var wg sync.WaitGroup
	for i := range c {
		wg.Go(func() {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t0 := time.Now()
				if err := s.call(ctx, i); err != nil {
					errs[i] = err
					return
				}
				lats[i] = append(lats[i], time.Since(t0))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	all := slices.Concat(lats...)
	slices.Sort(all)
	return all, nil
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
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "pg__query", Arguments: map[string]any{"sql": Query}})
	if err != nil {
		return err
	}
	if res.IsError {
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				return fmt.Errorf("isError: %s", t.Text)
			}
		}
		return errors.New("isError")
	}
	m, ok := res.StructuredContent.(map[string]any)
	if !ok || m["row_count"] != float64(100) {
		return fmt.Errorf("unexpected result: %v", res.StructuredContent)
	}
	return nil
}

// createDatabase creates a database with the bench table and returns its
// URL and a function that drops it.
func createDatabase(ctx context.Context, raw string) (*url.URL, func(), error) {
	root, err := pgx.Connect(ctx, raw)
	if err != nil {
		return nil, nil, err
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

// legateProc is the legate serve process.
type legateProc struct {
	cmd  *exec.Cmd
	addr string
}

func (p *legateProc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

// startLegate runs `legate serve` with one read-only postgres instance,
// id pg, and waits for /readyz.
func startLegate(ctx context.Context, o Options, db *url.URL, conns int) (*legateProc, error) {
	port := db.Port()
	if port == "" {
		port = "5432"
	}
	cfg := fmt.Sprintf("connectors:\n  - id: pg\n    type: postgres\n    config: {host: %q, port: %s, database: %q, user: %q, sslmode: disable, read_only: true, max_conns: %d}\n",
		db.Hostname(), port, strings.TrimPrefix(db.Path, "/"), db.User.Username(), conns)
	path := filepath.Join(o.Dir, "p6.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	logf, err := os.Create(filepath.Join(o.Dir, "p6-legate.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(o.Legate, "serve", "--config", path, "--state-dir", filepath.Join(o.Dir, "p6-state"), "--listen", addr)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &legateProc{cmd: cmd, addr: addr}
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.stop()
			return nil, fmt.Errorf("legate serve not ready after 10s (log: %s)", logf.Name())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// openSessions opens n go-sdk sessions speaking 2025-11-25, as the
// harness's other scenarios do.
func openSessions(ctx context.Context, endpoint string, n int) ([]*mcp.ClientSession, error) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	c := mcp.NewClient(&mcp.Implementation{Name: "legate-bench", Version: "1"}, nil)
	var out []*mcp.ClientSession
	for range n {
		s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, DisableStandaloneSSE: true},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			for _, s := range out {
				s.Close()
			}
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// cpuSeconds is the user+system CPU time of pid, from /proc/<pid>/stat.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: short", pid)
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return (ut + st) / 100, nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

func ratios(a, b []float64) []float64 {
	var out []float64
	for i := range a {
		if i < len(b) && b[i] != 0 {
			out = append(out, a[i]/b[i])
		}
	}
	return out
}
