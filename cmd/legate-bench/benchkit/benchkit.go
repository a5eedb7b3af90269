// Package benchkit is what the harness's scenarios that live in packages
// of their own share: the result row, a closed-loop load with latency and
// CPU per call, a `legate serve` process and go-sdk sessions to it.
package benchkit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/cmd/legate-bench/harness"
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
	// C are the concurrencies.
	C    []int
	Logf func(format string, args ...any)
}

// Upto returns the concurrencies of o up to max (at least C=1).
func (o Options) Upto(max int) []int {
	var cs []int
	for _, c := range o.C {
		if c <= max {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		cs = []int{1}
	}
	return cs
}

// Side is one way of making the call measured; PID, when set, is the
// process whose CPU is counted, else this one's.
type Side struct {
	Name string
	Call func(ctx context.Context, worker int) error
	PID  int
}

// Measurement is one side's calls/s, median latency (µs) and CPU per call (µs).
type Measurement struct{ Rate, P50, CPU float64 }

// Measure runs c workers of s in a closed loop: a warm-up, then the window.
func Measure(ctx context.Context, s Side, c int, warmup, window time.Duration) (Measurement, error) {
	if _, err := loop(ctx, s, c, warmup); err != nil {
		return Measurement{}, fmt.Errorf("warm-up: %w", err)
	}
	pid := s.PID
	if pid == 0 {
		pid = os.Getpid()
	}
	cpu0, err := harness.CPUSeconds(pid)
	if err != nil {
		return Measurement{}, err
	}
	start := time.Now()
	lat, err := loop(ctx, s, c, window)
	elapsed := time.Since(start)
	if err != nil {
		return Measurement{}, err
	}
	cpu1, err := harness.CPUSeconds(pid)
	if err != nil {
		return Measurement{}, err
	}
	if len(lat) == 0 {
		return Measurement{}, errors.New("no call completed")
	}
	return Measurement{Rate: float64(len(lat)) / elapsed.Seconds(), P50: float64(lat[len(lat)/2]) / 1e3,
		CPU: (cpu1 - cpu0) * 1e6 / float64(len(lat))}, nil
}

// loop calls on c workers until window has passed and returns the sorted
// latencies; any failed call fails the run.
func loop(ctx context.Context, s Side, c int, window time.Duration) ([]time.Duration, error) {
	deadline := time.Now().Add(window)
	lats := make([][]time.Duration, c)
	errs := make([]error, c)
	var wg sync.WaitGroup
	for i := range c {
		wg.Go(func() {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t0 := time.Now()
				if err := s.Call(ctx, i); err != nil {
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

// Rounds measures every side at every concurrency of cs, o.Rounds times,
// rotating which side goes first, and returns each side's measurements by
// C (indexed as sides).
func Rounds(ctx context.Context, o Options, scenario string, sides []Side, cs []int) (map[int][]Series, error) {
	res := map[int][]Series{}
	for r := range o.Rounds {
		for _, c := range cs {
			if res[c] == nil {
				res[c] = make([]Series, len(sides))
			}
			for k := range sides {
				s := (k + r) % len(sides)
				m, err := Measure(ctx, sides[s], c, o.Warmup, o.Window)
				if err != nil {
					return nil, fmt.Errorf("%s C=%d %s: %w", scenario, c, sides[s].Name, err)
				}
				x := &res[c][s]
				x.Rate, x.P50, x.CPU = append(x.Rate, m.Rate), append(x.P50, m.P50), append(x.CPU, m.CPU)
				o.Logf("%s round %d C=%d %-36s %7.0f calls/s p50 %6.0f µs cpu/call %5.0f µs", scenario, r+1, c, sides[s].Name, m.Rate, m.P50, m.CPU)
			}
		}
	}
	return res, nil
}

// Series are one side's measurements over the rounds.
type Series struct{ Rate, P50, CPU []float64 }

// Compare returns the rows of a side against a baseline side at C=c:
// calls/s against target (≥ target× the baseline's; 0: informative), p50
// latency and CPU per call.
func Compare(scenario, what string, c int, base, side Series, target float64, note string) []Row {
	rate := Row{Scenario: scenario, Metric: fmt.Sprintf("calls/s, %s, C=%d", what, c), Unit: "calls/s",
		Baseline: Median(base.Rate), Legate: Median(side.Rate), Ratio: Median(Ratios(side.Rate, base.Rate)), Note: note}
	if target > 0 {
		rate.Target, rate.Result = fmt.Sprintf("≥ %.1f× direct", target), PassFail(rate.Ratio >= target)
	}
	return []Row{rate,
		{Scenario: scenario, Metric: fmt.Sprintf("p50 latency, %s, C=%d", what, c), Unit: "µs",
			Baseline: Median(base.P50), Legate: Median(side.P50), Ratio: Median(Ratios(side.P50, base.P50))},
		{Scenario: scenario, Metric: fmt.Sprintf("CPU per call, %s, C=%d (baseline: the client library in the harness; Legate: its process)", what, c),
			Unit: "µs", Baseline: Median(base.CPU), Legate: Median(side.CPU), Ratio: Median(Ratios(side.CPU, base.CPU))},
	}
}

// PassFail is a judged row's result.
func PassFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

// Skip is the row of a measurement that could not be made here, saying
// why and what would make it possible; it holds no figure.
func Skip(scenario, reason string) Row {
	return Row{Scenario: scenario, Metric: "not measured: " + reason, Baseline: math.NaN(), Legate: math.NaN(), Ratio: math.NaN(), Result: "SKIP"}
}

// Legate is a `legate serve` process, or another MCP server the harness
// runs as one (StartHop).
type Legate struct {
	Cmd  *exec.Cmd
	Addr string // 127.0.0.1:PORT
}

// Stop ends the process (SIGTERM, then SIGKILL after 5 s).
func (p *Legate) Stop() {
	p.Cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { p.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		p.Cmd.Process.Kill()
		<-done
	}
}

// StartLegate runs `legate serve` with config (YAML) in o.Dir under name,
// with env added, and waits for /readyz.
func StartLegate(ctx context.Context, o Options, name, config string, env ...string) (*Legate, error) {
	path := filepath.Join(o.Dir, name+".yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		return nil, err
	}
	return start(ctx, o, name+"-legate", env, func(addr string) []string {
		return []string{o.Legate, "serve", "--config", path, "--state-dir", filepath.Join(o.Dir, name+"-state"), "--listen", addr}
	})
}

// start runs the command that args gives for a free loopback address, its
// output logged in o.Dir under name, and waits until it answers /readyz
// there.
func start(ctx context.Context, o Options, name string, env []string, args func(addr string) []string) (*Legate, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	logf, err := os.Create(filepath.Join(o.Dir, name+".log"))
	if err != nil {
		return nil, err
	}
	argv := args(addr)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Legate{Cmd: cmd, Addr: addr}
	exited := make(chan struct{})
	go func() { cmd.Process.Wait(); close(exited) }()
	for deadline := time.Now().Add(10 * time.Second); ; {
		select {
		case <-exited:
			log, _ := os.ReadFile(logf.Name())
			return nil, fmt.Errorf("%s exited: %s", name, strings.TrimSpace(string(log)))
		default:
		}
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.Stop()
			return nil, fmt.Errorf("%s not ready after 10s (log: %s)", name, logf.Name())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// OpenSessions opens n go-sdk sessions speaking 2025-11-25 to p, as the
// harness's other scenarios do.
func (p *Legate) OpenSessions(ctx context.Context, n int) ([]*mcp.ClientSession, error) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	c := mcp.NewClient(&mcp.Implementation{Name: "legate-bench", Version: "1"}, nil)
	var out []*mcp.ClientSession
	for range n {
		s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + p.Addr + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true},
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

// Call makes one tool call on s and fails on an error result, naming it.
func Call(ctx context.Context, s *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, error) {
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, err
	}
	if res.IsError {
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				return nil, fmt.Errorf("%s: isError: %s", name, t.Text)
			}
		}
		return nil, fmt.Errorf("%s: isError", name)
	}
	return res, nil
}

// Median of v (NaN for none).
func Median(v []float64) float64 {
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

// Ratios are a[i]/b[i], round by round.
func Ratios(a, b []float64) []float64 {
	var out []float64
	for i := range a {
		if i < len(b) && b[i] != 0 {
			out = append(out, a[i]/b[i])
		}
	}
	return out
}
