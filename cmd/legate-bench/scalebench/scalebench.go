// Package scalebench is the harness's scenario P8: Legate replicas sharing
// one PostgreSQL store. It measures stateless calls per second through one
// replica and through two, and how long an approval decided through one
// replica takes to reach a call waiting on another. It lives apart from the
// harness's main package, which registers it in a few lines (p8.go).
package scalebench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
)

// ServerURL is the PostgreSQL server the scenario uses:
// $LEGATE_BENCH_POSTGRES_URL, else $LEGATE_TEST_POSTGRES_URL, else the
// local server the tests use.
func ServerURL() string {
	for _, v := range []string{"LEGATE_BENCH_POSTGRES_URL", "LEGATE_TEST_POSTGRES_URL"} {
		if u := os.Getenv(v); u != "" {
			return u
		}
	}
	return "postgres://postgres@127.0.0.1:5432/postgres"
}

// Database creates an empty database on the server and returns its URL
// and a function that drops it.
func Database(ctx context.Context, server string) (string, func(), error) {
	b := make([]byte, 4)
	rand.Read(b)
	name := "legate_scalebench_" + hex.EncodeToString(b)
	exec := func(ctx context.Context, sql string) error {
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("P8 needs PostgreSQL (%s, or set LEGATE_BENCH_POSTGRES_URL): %w", server, err)
	}
	u, err := url.Parse(server)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	}
	return u.String(), drop, nil
}

// Connect opens n stateless (2026-07-28) client sessions to endpoint.
func Connect(ctx context.Context, endpoint string, n int) ([]*mcp.ClientSession, error) {
	var out []*mcp.ClientSession
	for i := range n {
		c := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprint("sqlbench-", i), Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
		if err != nil {
			Close(out)
			return nil, err
		}
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			cs.Close()
			Close(out)
			return nil, fmt.Errorf("%s negotiated %s, not the stateless 2026-07-28", endpoint, v)
		}
		out = append(out, cs)
	}
	return out, nil
}

// Close closes sessions.
func Close(sessions []*mcp.ClientSession) {
	for _, cs := range sessions {
		cs.Close()
	}
}

// Rate calls tool with args from every session at once, each in a loop,
// for warmup and then dur, and returns the calls per second of the
// measured window. A failed call or an error result stops it.
func Rate(ctx context.Context, sessions []*mcp.ClientSession, tool string, args map[string]any, warmup, dur time.Duration) (float64, error) {
	var calls atomic.Int64
	var counting atomic.Bool
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(sessions))
	var wg sync.WaitGroup
	for _, cs := range sessions {
		wg.Go(func() {
			for ctx.Err() == nil {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
				if ctx.Err() != nil {
					return
				}
				if err == nil && res.IsError {
					err = fmt.Errorf("%s: error result", tool)
				}
				if err != nil {
					errs <- err
					cancel()
					return
				}
				if counting.Load() {
					calls.Add(1)
				}
			}
		})
	}
	time.Sleep(warmup)
	counting.Store(true)
	start := time.Now()
	time.Sleep(dur)
	counting.Store(false)
	elapsed := time.Since(start)
	cancel()
	wg.Wait()
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	return float64(calls.Load()) / elapsed.Seconds(), nil
}

// Wake measures, n times, how long a decision takes to reach a waiting
// call: a POST through tool (which needs approval) waits on the replica of
// session; once its request is pending, it is approved through the admin
// API at decideOn (a replica's base URL); the time is from just before
// that POST to the call's return, its tool run included.
func Wake(ctx context.Context, session *mcp.ClientSession, tool, decideOn, adminToken string, n int) ([]time.Duration, error) {
	var out []time.Duration
	for i := range n {
		done := make(chan error, 1)
		var returned time.Time
		go func() {
			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"method": "POST", "path": "/held",
				"body": fmt.Sprint("wake-", i, "-", time.Now().UnixNano())}})
			returned = time.Now()
			if err == nil && res.IsError {
				err = fmt.Errorf("%s: error result (the approval wait must outlast the decision)", tool)
			}
			done <- err
		}()
		id, err := pending(ctx, decideOn, adminToken)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		if err := admin(ctx, http.MethodPost, decideOn+"/admin/v1/approvals/"+id+"/approve", adminToken, nil); err != nil {
			return nil, err
		}
		if err := <-done; err != nil {
			return nil, err
		}
		out = append(out, returned.Sub(start))
	}
	return out, nil
}

// pending polls the admin API of base until one request is pending and
// returns its id.
func pending(ctx context.Context, base, token string) (string, error) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var list struct {
			Approvals []struct {
				ID string `json:"id"`
			} `json:"approvals"`
		}
		if err := admin(ctx, http.MethodGet, base+"/admin/v1/approvals?state=pending", token, &list); err != nil {
			return "", err
		}
		if len(list.Approvals) > 0 {
			return list.Approvals[0].ID, nil
		}
		time.Sleep(2 * time.Millisecond)
	}
	return "", errors.New("no pending approval within 10s")
}

func admin(ctx context.Context, method, u, token string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s %s", method, u, resp.Status, body)
	}
	if out != nil {
		return json.Unmarshal(body, out)
	}
	return nil
}

// Percentile is the p-quantile of d (0 < p ≤ 1).
func Percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// Run is the measurement of the scenario, in rounds that alternate which
// side goes first.
type Run struct {
	// One holds sessions to one replica; Spread as many, split between two.
	One, Spread []*mcp.ClientSession
	// Tool is called with a GET (a read, allowed) and with a POST (a write,
	// which needs approval, decided through the admin API of Replicas[0],
	// where One's first session waits, or of Replicas[1]).
	Tool     string
	Replicas [2]string // base URLs
	Token    string    // the replicas' admin token
	Rounds   int
	Warmup   time.Duration
	Dur      time.Duration
	Wakes    int // decisions timed per round and side
	Log      func(format string, args ...any)
}

// Results are a Run's figures: calls per second by round through one
// replica and through two, and the wake-up times of decisions made through
// the waiting call's replica and through the other.
type Results struct {
	RateOne, RateTwo []float64
	Same, Cross      []time.Duration
}

// Measure runs r.
func (r Run) Measure(ctx context.Context) (*Results, error) {
	out := &Results{}
	args := map[string]any{"path": "/read"}
	for round := range r.Rounds {
		var rates [2]float64
		for i := range 2 {
			side := (round + i) % 2
			rate, err := Rate(ctx, [][]*mcp.ClientSession{r.One, r.Spread}[side], r.Tool, args, r.Warmup, r.Dur)
			if err != nil {
				return nil, err
			}
			rates[side] = rate
			d, err := Wake(ctx, r.One[0], r.Tool, r.Replicas[side], r.Token, r.Wakes)
			if err != nil {
				return nil, err
			}
			if side == 0 {
				out.Same = append(out.Same, d...)
			} else {
				out.Cross = append(out.Cross, d...)
			}
		}
		out.RateOne, out.RateTwo = append(out.RateOne, rates[0]), append(out.RateTwo, rates[1])
		r.Log("P8 round %d: %.0f calls/s one replica, %.0f two; decision to waiting call p50 %s same replica, %s other",
			round+1, rates[0], rates[1], Percentile(out.Same, 0.5), Percentile(out.Cross, 0.5))
	}
	return out, nil
}

// Ms is d in milliseconds.
func Ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// P8 runs the scenario: two replicas on a database of its own, each with
// one http connector to a trivial server in this process.
func P8(ctx context.Context, o benchkit.Options, smoke bool) ([]benchkit.Row, error) {
	db, drop, err := Database(ctx, ServerURL())
	if err != nil {
		return nil, err
	}
	defer drop()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte("ok"))
	}))
	defer target.Close()
	cfg := fmt.Sprintf("approvals: {wait: 30s}\nconnectors:\n  - id: web\n    type: http\n    config: {base_url: %q, allow_private_networks: true}\n", target.URL)
	run := Run{Tool: "web__call", Token: "bench-admin-token", Rounds: o.Rounds, Warmup: o.Warmup, Dur: o.Window, Log: o.Logf, Wakes: 20}
	c := 8
	if smoke {
		run.Wakes, c = 3, 2
	}
	for i := range run.Replicas {
		p, err := benchkit.StartLegate(ctx, o, fmt.Sprint("p8-replica-", i), cfg, "LEGATE_STORE="+db, "LEGATE_ADMIN_TOKEN="+run.Token)
		if err != nil {
			return nil, err
		}
		defer p.Stop()
		run.Replicas[i] = "http://" + p.Addr
	}
	if run.One, err = Connect(ctx, run.Replicas[0]+"/mcp", c); err != nil {
		return nil, err
	}
	defer Close(run.One)
	other, err := Connect(ctx, run.Replicas[1]+"/mcp", c/2)
	if err != nil {
		return nil, err
	}
	defer Close(other)
	run.Spread = append(run.One[:c/2:c/2], other...)
	res, err := run.Measure(ctx)
	if err != nil {
		return nil, err
	}
	same, cross := Ms(Percentile(res.Same, 0.5)), Ms(Percentile(res.Cross, 0.5))
	return []benchkit.Row{
		{Scenario: "P8", Metric: fmt.Sprintf("stateless calls/s, C=%d: one replica vs two on one store", c), Unit: "calls/s",
			Baseline: benchkit.Median(res.RateOne), Legate: benchkit.Median(res.RateTwo), Ratio: benchkit.Median(benchkit.Ratios(res.RateTwo, res.RateOne))},
		{Scenario: "P8", Metric: "approval decided → waiting call returns, p50: same replica vs another", Unit: "ms",
			Baseline: same, Legate: cross, Ratio: cross / same, Target: "≤ 50 ms", Result: passFail(cross <= 50)},
	}, nil
}

func passFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}
