// Package soak is legate-bench's soak (`legate-bench -soak`, `make soak`):
// many concurrent sessions and many calls through the real `legate serve`
// to an upstream that fails some of them on purpose (upstream.go), then a
// check that nothing else failed and that Legate gave back what the load
// took: goroutines, open files and memory, measured before and after, each
// after a settle period.
//
// "Before" is measured after a warm-up wave at the same concurrency, so
// that what a loaded Legate legitimately keeps (the upstream connection
// pool, the heap the Go runtime holds on to) is in both figures and only
// what the calls leave behind shows as growth.
package soak

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
	"github.com/legate-mcp/legate/cmd/legate-bench/harness"
)

// Config holds the soak's flags (-sessions is P4's, shared).
type Config struct {
	calls    int
	waves    int
	errRate  float64
	hangRate float64
	dropRate float64
	timeout  time.Duration
	settle   time.Duration
	maxRun   time.Duration
	tolGo    int
	tolFDs   int
	tolRSS   float64
}

// Flags registers the soak's flags on the command line's flag set.
func Flags() *Config {
	c := &Config{}
	flag.IntVar(&c.calls, "calls", 100000, "soak: calls in all, over the waves")
	flag.IntVar(&c.waves, "waves", 2, "soak: waves of -sessions concurrent sessions each, measured after each")
	flag.Float64Var(&c.errRate, "fault-error", 0.02, "soak: share of calls the upstream's tool fails (isError)")
	flag.Float64Var(&c.hangRate, "fault-hang", 0.005, "soak: share of calls the upstream never answers (Legate's timeout ends them)")
	flag.Float64Var(&c.dropRate, "fault-drop", 0.005, "soak: share of calls whose upstream connection is dropped mid-call")
	flag.DurationVar(&c.timeout, "upstream-timeout", 2*time.Second, "soak: the upstream's call timeout in Legate's config")
	flag.DurationVar(&c.settle, "settle", 10*time.Second, "soak: wait after each wave (sessions closed, Legate idle) before measuring")
	flag.DurationVar(&c.maxRun, "soak-max", 20*time.Minute, "soak: give up (and fail) after this long")
	flag.IntVar(&c.tolGo, "tolerance-goroutines", 10, "soak: goroutines allowed above the warm-up's, the upstream pool's taken out")
	flag.IntVar(&c.tolFDs, "tolerance-fds", 5, "soak: open files allowed above the warm-up's, the upstream pool's taken out")
	flag.Float64Var(&c.tolRSS, "tolerance-rss", 0.20, "soak: RSS growth allowed over the warm-up's, as a fraction (16 MiB at least: the runtime's and SQLite's caches vary by that much)")
	return c
}

// soakTool is the upstream's echo tool as a client of Legate names it.
const soakTool = "mcp__up__echo"

// Run runs the soak against the legate binary o.Legate, in o.Dir, with
// sessions concurrent sessions, and prints its report; an error fails it.
func Run(ctx context.Context, o benchkit.Options, sessions int, c *Config) error {
	if sessions < 1 || c.calls < sessions || c.waves < 1 {
		return errors.New("soak: want -sessions ≥ 1, -calls ≥ -sessions, -waves ≥ 1")
	}
	ctx, cancel := context.WithTimeout(ctx, c.maxRun)
	defer cancel()
	start, load0 := time.Now(), harness.LoadAvg()
	up, err := harness.StartSelf(ctx, o.Dir, "soak-upstream", "soakupstream")
	if err != nil {
		return err
	}
	defer up.Stop()
	cfg, err := harness.WriteFile(o.Dir, "soak.yaml", fmt.Sprintf("upstreams:\n  - {id: up, url: \"http://%s/mcp\", timeout: %s, max_concurrency: 64}\n"+
		"policy:\n  rules:\n    - {tool: \"mcp.up.echo\", action: allow}\n", up.Addr, c.timeout))
	if err != nil {
		return err
	}
	lg, err := harness.StartLegate(ctx, o.Dir, "soak-legate", o.Legate, cfg, filepath.Join(o.Dir, "soak-state"))
	if err != nil {
		return err
	}
	defer lg.Stop()
	endpoint := "http://" + lg.Addr + "/mcp"
	hc := harness.NewHTTPClient()
	if err := waitTool(ctx, hc, endpoint, soakTool); err != nil {
		return err
	}

	// At start, for the record only: the warm-up's figures are the baseline.
	cold, err := settle(lg, up, "at start (not judged)", 0)
	if err != nil {
		return err
	}
	var snaps []soakSnap
	warm := &tally{}
	// As many calls as the sessions take to reach their steady state: two
	// each, and a tenth of the soak's.
	nWarm := max(2*sessions, c.calls/10)
	o.Logf("soak: warm-up, %d sessions, %d calls", sessions, nWarm)
	if err := soakWave(ctx, hc, endpoint, sessions, nWarm, 0, c, warm); err != nil {
		return err
	}
	s, err := settleAfterWave(ctx, hc, endpoint, lg, up, "after warm-up", c.settle)
	if err != nil {
		return err
	}
	snaps = append(snaps, s)
	t := &tally{}
	var loaded time.Duration
	for w := 1; w <= c.waves; w++ {
		n := c.calls / c.waves
		if w == c.waves {
			n = c.calls - n*(c.waves-1)
		}
		o.Logf("soak: wave %d of %d, %d sessions, %d calls", w, c.waves, sessions, n)
		t0 := time.Now()
		if err := soakWave(ctx, hc, endpoint, sessions, n, uint64(w), c, t); err != nil {
			return err
		}
		loaded += time.Since(t0)
		if s, err = settleAfterWave(ctx, hc, endpoint, lg, up, fmt.Sprintf("after wave %d", w), c.settle); err != nil {
			return err
		}
		snaps = append(snaps, s)
	}
	fmt.Println(harness.MachineLine())
	fmt.Printf("Soak: %s; %d waves of %d concurrent sessions, %d calls in %s (%.0f calls/s; sessions opened and closed included); "+
		"faults asked of the upstream: %.1f%% tool errors, %.1f%% hangs (upstream timeout %s), %.1f%% dropped connections; "+
		"settle %s; took %s; load average %s at start, %s at end.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), c.waves, sessions, t.total(), loaded.Round(time.Second), float64(t.total())/loaded.Seconds(),
		100*c.errRate, 100*c.hangRate, c.timeout, 100*c.dropRate, c.settle, time.Since(start).Round(time.Second), load0, harness.LoadAvg())
	return report(os.Stdout, warm, t, cold, snaps, c)
}

// waitTool waits until Legate lists tool (its start-up refresh is done).
func waitTool(ctx context.Context, hc *http.Client, endpoint, tool string) error {
	ss, err := harness.OpenSessions(ctx, hc, endpoint, 1, 1, false)
	if err != nil {
		return err
	}
	defer harness.CloseSessions(ss)
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		tools, err := harness.ListAll(ctx, ss[0])
		if err != nil {
			return err
		}
		for _, t := range tools {
			if t.Name == tool {
				return nil
			}
		}
	}
	return fmt.Errorf("legate never listed %s", tool)
}

// soakWave opens n sessions (each with its standing SSE stream, as
// interactive clients keep one), makes calls over all of them at once,
// records each outcome in t, then closes the sessions and the client's
// idle connections.
//
// One more session makes a healthy keep-alive call every 20 ms for as long
// as the wave runs. Without it the end of a wave would be unlike real
// traffic, which does not stop: its last calls to end are its hanging
// ones, whose timeouts then come in a row with no success between, and
// five such failures open the upstream's circuit (as it is meant to) under
// the few calls still to be made.
func soakWave(ctx context.Context, hc *http.Client, endpoint string, n, calls int, seed uint64, c *Config, t *tally) error {
	sessions, err := harness.OpenSessions(ctx, hc, endpoint, n+1, 32, true)
	if err != nil {
		return err
	}
	defer hc.CloseIdleConnections()
	defer harness.CloseSessions(sessions)
	stop := make(chan struct{})
	kept := make(chan struct{})
	go func() {
		defer close(kept)
		keepAlive(ctx, sessions[n], seed, t, stop)
	}()
	done := make(chan struct{}, n)
	for i, cs := range sessions[:n] {
		mine := calls / n
		if i < calls%n {
			mine++
		}
		go func() {
			defer func() { done <- struct{}{} }()
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			for j := range mine {
				soakCall(ctx, cs, c.pick(rng), fmt.Sprintf("w%d s%d c%d", seed, i, j), c, t)
			}
		}()
	}
	for range n {
		<-done
	}
	close(stop)
	<-kept
	return ctx.Err()
}

// keepAlive makes a healthy call on cs every 20 ms until stop.
func keepAlive(ctx context.Context, cs *mcp.ClientSession, seed uint64, t *tally, stop <-chan struct{}) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for j := 0; ; j++ {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		soakCall(ctx, cs, keepAliveKind, fmt.Sprintf("w%d keep c%d", seed, j), nil, t)
	}
}

// keepAliveKind marks the keep-alive calls: healthy, counted apart.
const keepAliveKind = "keep-alive"

// soakCall makes one call asking for kind and records how it ended.
func soakCall(ctx context.Context, cs *mcp.ClientSession, kind, id string, c *Config, t *tally) {
	text := kind + " " + id
	timeout := 30 * time.Second
	if c != nil {
		timeout += c.timeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: soakTool, Arguments: map[string]any{"text": text}})
	t.record(kind, classify(kind, text, res, err))
}

// pick draws the fault a call asks for, "call" for none.
func (c *Config) pick(rng *rand.Rand) string {
	x := rng.Float64()
	switch {
	case x < c.errRate:
		return faultError
	case x < c.errRate+c.hangRate:
		return faultHang
	case x < c.errRate+c.hangRate+c.dropRate:
		return faultDrop
	}
	return "call"
}

// classify says how a call that asked for kind ended: "" when as it should
// (the echo, or the error its fault must give), else what happened.
func classify(kind, text string, res *mcp.CallToolResult, err error) string {
	if err != nil {
		return "error: " + harness.FirstLine(err.Error())
	}
	got := harness.TextOf(res)
	code, _, _ := strings.Cut(got, ":")
	switch {
	case (kind == "call" || kind == keepAliveKind) && !res.IsError && got == text,
		kind == faultError && res.IsError && got == injectedError,
		kind == faultHang && res.IsError && code == "TIMEOUT",
		kind == faultDrop && res.IsError && code == "UPSTREAM_UNAVAILABLE" && !strings.Contains(got, "circuit open"):
		return ""
	case res.IsError:
		return "isError: " + got
	}
	return "result: " + got
}

// settleAfterWave closes the upstream's circuit if the wave's last calls
// opened it, then settles and measures. A wave's last calls to end are its
// hanging ones, with no success left between their timeouts: enough of
// them in a row open the circuit, as it is meant to, after the wave's last
// call. The next wave would meet it still open or half-open, so one
// healthy call, once the cooldown is over, closes it first.
func settleAfterWave(ctx context.Context, hc *http.Client, endpoint string, lg, up *harness.Proc, phase string, period time.Duration) (soakSnap, error) {
	if _, _, err := harness.WaitIdle(lg, 500*time.Millisecond, time.Minute); err != nil {
		return soakSnap{}, err
	}
	opened := false
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(250 * time.Millisecond) {
		m, err := scrape(lg.Addr, `legate_upstream_circuit_state{upstream="up"}`)
		switch {
		case err != nil:
			return soakSnap{}, err
		case m[0] == 0:
			s, err := settle(lg, up, phase, period)
			s.circuitOpened = opened
			return s, err
		case time.Now().After(deadline):
			return soakSnap{}, fmt.Errorf("%s: the upstream's circuit is still not closed", phase)
		}
		opened = true
		if m[0] == 1 { // half-open: a call may probe
			ss, err := harness.OpenSessions(ctx, hc, endpoint, 1, 1, false)
			if err != nil {
				return soakSnap{}, err
			}
			ss[0].CallTool(ctx, &mcp.CallToolParams{Name: soakTool, Arguments: map[string]any{"text": "probe"}})
			harness.CloseSessions(ss)
			hc.CloseIdleConnections()
		}
	}
}

// soakSnap is what Legate holds at one moment.
type soakSnap struct {
	phase      string
	goroutines int
	fds        int
	rss        int64
	heap       int64 // heap in use
	upConns    int   // connections to the upstream, open (its pool)
	// circuitOpened: the wave's last calls left the upstream's circuit open.
	circuitOpened bool
}

// pooled are the goroutines and files left once the upstream connection
// pool's are taken out: two goroutines (reader, writer) and a file each.
func (s soakSnap) pooled() (goroutines, fds int) {
	return s.goroutines - 2*s.upConns, s.fds - s.upConns
}

// settle waits until Legate is idle, then for period, and measures it.
func settle(p, up *harness.Proc, phase string, period time.Duration) (soakSnap, error) {
	if _, _, err := harness.WaitIdle(p, 500*time.Millisecond, time.Minute); err != nil {
		return soakSnap{}, err
	}
	time.Sleep(period)
	s := soakSnap{phase: phase}
	var err error
	if s.upConns, err = upstreamConns(up); err != nil {
		return s, err
	}
	m, err := scrape(p.Addr, "go_goroutines", "go_memstats_heap_inuse_bytes")
	if err != nil {
		return s, err
	}
	s.goroutines, s.heap = int(m[0]), int64(m[1])
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.Pid()))
	if err != nil {
		return s, err
	}
	s.fds = len(fds)
	s.rss, err = harness.RSSBytes(p.Pid())
	return s, err
}

// scrape reads series (without labels) from Legate's /metrics.
func scrape(addr string, series ...string) ([]float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(series))
	for i, name := range series {
		found := false
		for l := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), name+" "); ok {
				if out[i], err = strconv.ParseFloat(v, 64); err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("no %s in /metrics", name)
		}
	}
	return out, nil
}

// upstreamConns asks the soak upstream how many connections are open to
// it, on a connection of its own that it closes (so not counted after).
func upstreamConns(up *harness.Proc) (int, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+up.Addr+"/_soak/conns", nil)
	if err != nil {
		return 0, err
	}
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
