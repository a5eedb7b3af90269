package curvebench

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
	"github.com/legate-mcp/legate/cmd/legate-bench/harness"
)

// upstreamCurve measures forwarded calls against the upstreams configured:
// N go-sdk upstreams of one echo tool each (one process), C sessions in a
// closed loop, the calls spread round-robin over every upstream, then all
// to the first one.
func upstreamCurve(ctx context.Context, o Options) ([]Curve, error) {
	sizes := pick(o, []int{1, 10}, []int{1, 10, 100})
	c := pick(o, 2, 8)
	rounds := pick(o, 1, 3)
	spread := Metric{Name: fmt.Sprintf("calls/s, spread over every upstream, C=%d", c), Unit: "calls/s", Expect: Constant, Inverse: true}
	one := Metric{Name: fmt.Sprintf("calls/s, all to one upstream, C=%d", c), Unit: "calls/s", Expect: Constant, Inverse: true}
	cpu := Metric{Name: fmt.Sprintf("Legate CPU per call, spread, C=%d", c), Unit: "µs", Expect: Constant}
	for _, n := range sizes {
		r, err := upstreamsAt(ctx, o, n, c, rounds)
		if err != nil {
			return nil, fmt.Errorf("%d upstreams: %w", n, err)
		}
		x := float64(n)
		spread.Points = append(spread.Points, Point{x, r[0]})
		one.Points = append(one.Points, Point{x, r[1]})
		cpu.Points = append(cpu.Points, Point{x, r[2]})
	}
	return []Curve{{ID: "upstreams-calls", Title: "Forwarded calls against configured upstreams", Work: "upstreams", LogX: true, LogY: true,
		YLabel: "calls/s; µs", Metrics: []Metric{spread, one, cpu},
		Notes: []string{fmt.Sprintf("`legate serve` with N upstreams (go-sdk servers of one echo tool, in one process) and an allow rule for "+
			"`mcp.*.echo`; %d go-sdk sessions in a closed loop, %s windows after %s warm-up, median of %d rounds. Spread: each session "+
			"calls u0, u1, … in turn (every upstream's session and connections in use); one: every call to u0. The cost per 10× work "+
			"of a rate is its inverse's: calls/s falling by half per decade reads as 2×.", c, o.Window, o.Warmup, rounds)}}}, nil
}

// upstreamsAt returns the spread and the one-upstream calls/s and Legate's
// CPU per spread call (µs) with n upstreams.
func upstreamsAt(ctx context.Context, o Options, n, c, rounds int) ([3]float64, error) {
	name := fmt.Sprintf("ups-%d", n)
	up, err := harness.StartSelf(ctx, o.Dir, name+"-upstreams", "upstream", "-servers", fmt.Sprint(n), "-tools", "1")
	if err != nil {
		return [3]float64{}, err
	}
	defer up.Stop()
	var sb strings.Builder
	sb.WriteString("upstreams:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  - {id: u%d, url: \"http://%s/u%d\"}\n", i, up.Addr, i)
	}
	sb.WriteString("policy:\n  rules:\n    - {tool: \"mcp.*.echo\", action: allow}\n")
	cfg, err := harness.WriteFile(o.Dir, name+".yaml", sb.String())
	if err != nil {
		return [3]float64{}, err
	}
	lg, err := harness.StartLegate(ctx, o.Dir, name+"-legate", o.Legate, cfg, filepath.Join(o.Dir, name+"-state"))
	if err != nil {
		return [3]float64{}, err
	}
	defer lg.Stop()
	sessions, err := harness.OpenSessions(ctx, harness.NewHTTPClient(), "http://"+lg.Addr+"/mcp", c, 8, false)
	if err != nil {
		return [3]float64{}, err
	}
	defer harness.CloseSessions(sessions)
	if err := waitUpstreamTools(ctx, sessions[0], n); err != nil {
		return [3]float64{}, err
	}
	var next atomic.Int64
	args := map[string]any{"text": "hello"}
	spread := func(ctx context.Context, cs *mcp.ClientSession) error {
		i := next.Add(1) % int64(n)
		return harness.ToolCall(fmt.Sprintf("mcp__u%d__echo", i), args)(ctx, cs)
	}
	one := harness.ToolCall("mcp__u0__echo", args)
	var rs, ro, cpu []float64
	watch := map[string]*harness.Proc{"legate": lg}
	for r := range rounds {
		for k := range 2 {
			call := []harness.CallFunc{spread, one}[(k+r)%2]
			lr, err := harness.RunLoad(ctx, sessions, call, o.Warmup, o.Window, watch, nil)
			if err != nil {
				return [3]float64{}, err
			}
			if (k+r)%2 == 0 {
				rs, cpu = append(rs, lr.Rate()), append(cpu, lr.CPUPerCall("legate"))
			} else {
				ro = append(ro, lr.Rate())
			}
		}
	}
	res := [3]float64{benchkit.Median(rs), benchkit.Median(ro), benchkit.Median(cpu)}
	o.Logf("curves: %d upstreams: %.0f calls/s spread, %.0f to one; %.0f µs Legate CPU per call", n, res[0], res[1], res[2])
	return res, nil
}

// waitUpstreamTools waits (30 s at most) until the session lists the echo
// tool of each of the n upstreams.
func waitUpstreamTools(ctx context.Context, cs *mcp.ClientSession, n int) error {
	got := 0
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		tools, err := harness.ListAll(ctx, cs)
		if err != nil {
			return err
		}
		got = 0
		for _, t := range tools {
			if strings.HasPrefix(t.Name, "mcp__") && strings.HasSuffix(t.Name, "__echo") {
				got++
			}
		}
		if got == n {
			return nil
		}
	}
	return fmt.Errorf("%d of %d upstreams' echo tools listed after 30s", got, n)
}
