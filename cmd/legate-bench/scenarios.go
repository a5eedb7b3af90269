package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
	"github.com/legate-mcp/legate/cmd/legate-bench/harness"
)

// bench is one run of the harness.
type bench struct {
	dir      string // temporary directory: configs, state, logs
	bin      string // the real legate binary
	slimBin  string // the same with only the http and webhook connector types (P4); built when empty
	smoke    bool
	rounds   int
	warmup   time.Duration
	dur      time.Duration
	cs       []int // concurrencies of P1
	lists    int   // tools/list calls timed through Legate in P2
	sessions int   // idle sessions in P4
	bigUps   int   // upstreams of P2 and P5 (each with bigTools tools)
	settle   time.Duration
	big      *bigCache
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "legate-bench: "+format+"\n", args...)
}

// order is the two targets' order in round r: baseline first in even
// rounds, Legate first in odd ones.
func order(r int) []int { return rotate(r, 2) }

// rotate is the order of n measurements in round r: each goes first in
// turn.
func rotate(r, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = (r + i) % n
	}
	return out
}

func (b *bench) writeFile(name, content string) (string, error) {
	return harness.WriteFile(b.dir, name, content)
}

// waitTools polls tools/list on cs until it holds want tools named with
// prefix (10 s at most).
func waitTools(ctx context.Context, cs *mcp.ClientSession, prefix string, want int) error {
	deadline := time.Now().Add(10 * time.Second)
	got := 0
	for time.Now().Before(deadline) {
		tools, err := harness.ListAll(ctx, cs)
		if err != nil {
			return err
		}
		if got = countPrefix(tools, prefix); got >= want {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("catalog holds %d %s* tools after 10s, want %d", got, prefix, want)
}

func countPrefix(tools []*mcp.Tool, prefix string) int {
	n := 0
	for _, t := range tools {
		if strings.HasPrefix(t.Name, prefix) {
			n++
		}
	}
	return n
}

// ---- P1: forwarded call ----

func (b *bench) p1(ctx context.Context) ([]row, error) {
	up, err := harness.StartSelf(ctx, b.dir, "p1-upstream", "upstream", "-servers", "1", "-tools", "1")
	if err != nil {
		return nil, err
	}
	defer up.Stop()
	cfg, err := b.writeFile("p1.yaml", fmt.Sprintf(`upstreams:
  - {id: up, url: "http://%s/mcp"}
policy:
  rules:
    - {tool: "mcp.up.echo", action: allow}
`, up.Addr))
	if err != nil {
		return nil, err
	}
	lg, err := harness.StartLegate(ctx, b.dir, "p1-legate", b.bin, cfg, filepath.Join(b.dir, "p1-state"))
	if err != nil {
		return nil, err
	}
	defer lg.Stop()
	px, err := harness.StartSelf(ctx, b.dir, "p1-proxy", "proxy", "-target", "http://"+up.Addr)
	if err != nil {
		return nil, err
	}
	defer px.Stop()
	rows, err := b.forwarded(ctx, up, lg, px, "P1")
	return rows, err
}

// forwarded measures P1 against a running upstream and Legate (also used
// by -profile with Legate in-process), and against px, a plain reverse
// proxy to the upstream, when not nil: the reference for what forwarding
// alone costs.
func (b *bench) forwarded(ctx context.Context, up, lg, px *harness.Proc, scen string) ([]row, error) {
	const direct, legate, proxy, stateless = 0, 1, 2, 3
	names := []string{"direct", "through Legate", "plain proxy", "Legate, stateless"}
	maxC := slices.Max(b.cs)
	targets := make([][]*mcp.ClientSession, 2, 3)
	var err error
	if targets[direct], err = harness.OpenSessions(ctx, harness.NewHTTPClient(), "http://"+up.Addr+"/mcp", maxC, 8, false); err != nil {
		return nil, err
	}
	defer harness.CloseSessions(targets[direct])
	if targets[legate], err = harness.OpenSessions(ctx, harness.NewHTTPClient(), "http://"+lg.Addr+"/mcp", maxC, 8, false); err != nil {
		return nil, err
	}
	defer harness.CloseSessions(targets[legate])
	if err := waitTools(ctx, targets[legate][0], "mcp__up__echo", 1); err != nil {
		return nil, err
	}
	echo, viaEcho := harness.ToolCall("echo", map[string]any{"text": "hello"}), harness.ToolCall("mcp__up__echo", map[string]any{"text": "hello"})
	calls := []harness.CallFunc{echo, viaEcho, echo, viaEcho}
	watch := []map[string]*harness.Proc{{"upstream": up, "legate": lg}, {"upstream": up, "legate": lg}, {"upstream": up, "legate": px}, {"upstream": up, "legate": lg}}
	if px != nil {
		s, err := harness.OpenSessions(ctx, harness.NewHTTPClient(), "http://"+px.Addr+"/mcp", maxC, 8, false)
		if err != nil {
			return nil, err
		}
		defer harness.CloseSessions(s)
		// Clients of protocol 2026-07-28, which has no sessions (informative:
		// the go-sdk upstream, stateful, has no such baseline).
		sl, err := harness.OpenSessionsAt(ctx, harness.NewHTTPClient(), "http://"+lg.Addr+"/mcp", maxC, 8, false, harness.StatelessProtocol)
		if err != nil {
			return nil, err
		}
		defer harness.CloseSessions(sl)
		targets = append(targets, s, sl)
	}
	type series struct{ rate, p50, p99, upCPU, lgCPU, conns, reqs []float64 }
	res := map[int][]series{}
	for _, c := range b.cs {
		res[c] = make([]series, len(targets))
	}
	var rtt []float64
	rttClient := harness.NewHTTPClient()
	for r := range b.rounds {
		lat, err := harness.HTTPRTT(ctx, rttClient, "http://"+up.Addr+"/_bench/ping", b.warmup/2, b.dur/2)
		if err != nil {
			return nil, err
		}
		rtt = append(rtt, us(harness.Percentile(lat, 0.5)))
		for _, c := range b.cs {
			for _, t := range rotate(r, len(targets)) {
				lr, err := harness.RunLoad(ctx, targets[t][:c], calls[t], b.warmup, b.dur, watch[t], up)
				if err != nil {
					return nil, fmt.Errorf("C=%d %s: %w", c, names[t], err)
				}
				s := &res[c][t]
				s.rate = append(s.rate, lr.Rate())
				s.p50 = append(s.p50, us(lr.P(0.5)))
				s.p99 = append(s.p99, us(lr.P(0.99)))
				s.upCPU = append(s.upCPU, lr.CPUPerCall("upstream"))
				s.lgCPU = append(s.lgCPU, lr.CPUPerCall("legate"))
				s.conns = append(s.conns, float64(lr.Up.Conns)/float64(lr.Calls)*1000)
				s.reqs = append(s.reqs, float64(lr.Up.Requests)/float64(lr.Calls))
				b.logf("%s round %d C=%d %-17s %7.0f calls/s p50 %6.0f µs p99 %6.0f µs cpu/call upstream %4.0f µs %s %4.0f µs",
					scen, r+1, c, names[t], lr.Rate(), us(lr.P(0.5)), us(lr.P(0.99)),
					lr.CPUPerCall("upstream"), map[bool]string{true: "proxy ", false: "legate"}[t == proxy], lr.CPUPerCall("legate"))
			}
		}
	}
	var rows []row
	for _, c := range b.cs {
		d, v := res[c][direct], res[c][legate]
		rr := row{Scenario: scen, Metric: fmt.Sprintf("calls/s, C=%d", c), Unit: "calls/s",
			Baseline: benchkit.Median(d.rate), Legate: benchkit.Median(v.rate), Ratio: benchkit.Median(benchkit.Ratios(v.rate, d.rate))}
		if c == 8 {
			rr.Target = "≥ 0.75× direct"
			rr.Result = benchkit.PassFail(rr.Ratio >= 0.75)
		}
		rows = append(rows, rr)
		rows = append(rows, row{Scenario: scen, Metric: fmt.Sprintf("p50 latency, C=%d", c), Unit: "µs",
			Baseline: benchkit.Median(d.p50), Legate: benchkit.Median(v.p50), Ratio: benchkit.Median(benchkit.Ratios(v.p50, d.p50))})
		rows = append(rows, row{Scenario: scen, Metric: fmt.Sprintf("p99 latency, C=%d", c), Unit: "µs",
			Baseline: benchkit.Median(d.p99), Legate: benchkit.Median(v.p99), Ratio: benchkit.Median(benchkit.Ratios(v.p99, d.p99))})
	}
	addedP50 := func(t int) []float64 {
		d, v := res[1][direct], res[1][t]
		added := make([]float64, len(d.p50))
		for i := range added {
			added[i] = v.p50[i] - d.p50[i]
		}
		return added
	}
	if _, ok := res[1]; ok {
		added := addedP50(legate)
		budget := benchkit.Median(rtt) + 150
		rows = append(rows, row{Scenario: scen, Metric: "p50 added latency, C=1", Note: "baseline: one loopback HTTP round trip", Unit: "µs",
			Baseline: benchkit.Median(rtt), Legate: benchkit.Median(added), Ratio: none,
			Target: fmt.Sprintf("≤ round trip + 150 µs = %.0f µs", budget), Result: benchkit.PassFail(benchkit.Median(added) <= budget)})
	}
	for _, c := range b.cs {
		v := res[c][legate]
		rows = append(rows, row{Scenario: scen, Metric: fmt.Sprintf("CPU per forwarded call, C=%d", c), Note: "baseline: upstream's, same window", Unit: "µs",
			Baseline: benchkit.Median(v.upCPU), Legate: benchkit.Median(v.lgCPU), Ratio: benchkit.Median(benchkit.Ratios(v.lgCPU, v.upCPU)),
			Target: "≤ 1× upstream", Result: benchkit.PassFail(benchkit.Median(benchkit.Ratios(v.lgCPU, v.upCPU)) <= 1)})
	}
	if px != nil {
		for _, c := range b.cs {
			d, p := res[c][direct], res[c][proxy]
			rows = append(rows, row{Scenario: scen, Metric: fmt.Sprintf("calls/s through the plain proxy, C=%d", c), Note: "reference: httputil.ReverseProxy; baseline: direct", Unit: "calls/s",
				Baseline: benchkit.Median(d.rate), Legate: benchkit.Median(p.rate), Ratio: benchkit.Median(benchkit.Ratios(p.rate, d.rate))})
		}
		for _, c := range b.cs {
			p, v := res[c][proxy], res[c][legate]
			rows = append(rows, row{Scenario: scen, Metric: fmt.Sprintf("calls/s, Legate vs the plain proxy, C=%d", c), Unit: "calls/s",
				Baseline: benchkit.Median(p.rate), Legate: benchkit.Median(v.rate), Ratio: benchkit.Median(benchkit.Ratios(v.rate, p.rate))})
		}
		if _, ok := res[1]; ok {
			rows = append(rows, row{Scenario: scen, Metric: "p50 added latency, C=1, plain proxy vs Legate", Unit: "µs",
				Baseline: benchkit.Median(addedP50(proxy)), Legate: benchkit.Median(addedP50(legate)), Ratio: none})
		}
		for _, c := range b.cs {
			p, v := res[c][proxy], res[c][legate]
			rows = append(rows, row{Scenario: scen, Metric: fmt.Sprintf("CPU per call, Legate vs the plain proxy, C=%d", c), Unit: "µs",
				Baseline: benchkit.Median(p.lgCPU), Legate: benchkit.Median(v.lgCPU), Ratio: benchkit.Median(benchkit.Ratios(v.lgCPU, p.lgCPU))})
		}
		for _, c := range b.cs {
			d, p := res[c][direct], res[c][proxy]
			rows = append(rows, row{Scenario: scen, Metric: fmt.Sprintf("upstream CPU per call through the plain proxy, C=%d", c), Note: "direct vs through the proxy", Unit: "µs",
				Baseline: benchkit.Median(d.upCPU), Legate: benchkit.Median(p.upCPU), Ratio: benchkit.Median(benchkit.Ratios(p.upCPU, d.upCPU))})
		}
		for _, c := range b.cs {
			v, sl := res[c][legate], res[c][stateless]
			rows = append(rows, row{Scenario: scen, Metric: fmt.Sprintf("calls/s of stateless (2026-07-28) clients through Legate, C=%d", c), Note: "baseline: clients with sessions, through Legate", Unit: "calls/s",
				Baseline: benchkit.Median(v.rate), Legate: benchkit.Median(sl.rate), Ratio: benchkit.Median(benchkit.Ratios(sl.rate, v.rate))})
		}
	}
	for _, c := range b.cs {
		d, v := res[c][direct], res[c][legate]
		rows = append(rows, row{Scenario: scen, Metric: fmt.Sprintf("upstream CPU per call, C=%d", c), Note: "direct vs through Legate", Unit: "µs",
			Baseline: benchkit.Median(d.upCPU), Legate: benchkit.Median(v.upCPU), Ratio: benchkit.Median(benchkit.Ratios(v.upCPU, d.upCPU))})
	}
	for _, c := range b.cs {
		d, v := res[c][0], res[c][1]
		rows = append(rows, row{Scenario: scen, Metric: fmt.Sprintf("upstream HTTP requests per call, C=%d", c), Unit: "x",
			Baseline: benchkit.Median(d.reqs), Legate: benchkit.Median(v.reqs), Ratio: none})
		rows = append(rows, row{Scenario: scen, Metric: fmt.Sprintf("new upstream TCP connections per 1,000 calls, C=%d", c), Unit: "",
			Baseline: benchkit.Median(d.conns), Legate: benchkit.Median(v.conns), Ratio: none})
	}
	return rows, nil
}

// ---- P2: list at scale, and the cache P5 starts from ----

// bigTools is the tools of each P2 upstream.
const bigTools = 100

// bigCache is a state directory whose cache holds 50 upstreams × 100 tools.
type bigCache struct {
	cfg, state string
	up         *harness.Proc // the upstreams, while running
}

// prepareBigCache starts the 50 upstreams (one process, /u0../u49, plus
// the uncounted /all baseline) and fills a state directory's cache with
// `legate upstream refresh`.
func (b *bench) prepareBigCache(ctx context.Context) (*bigCache, error) {
	if b.big != nil {
		return b.big, nil
	}
	up, err := harness.StartSelf(ctx, b.dir, "p2-upstreams", "upstream", "-servers", fmt.Sprint(b.bigUps), "-tools", fmt.Sprint(bigTools), "-all")
	if err != nil {
		return nil, err
	}
	var sb strings.Builder
	sb.WriteString("upstreams:\n")
	for i := range b.bigUps {
		fmt.Fprintf(&sb, "  - {id: u%d, url: \"http://%s/u%d\"}\n", i, up.Addr, i)
	}
	cfg, err := b.writeFile("p2.yaml", sb.String())
	if err != nil {
		up.Stop()
		return nil, err
	}
	state := filepath.Join(b.dir, "p2-state")
	t0 := time.Now()
	out, err := runCmd(ctx, b.bin, "upstream", "refresh", "--config", cfg, "--state-dir", state)
	if err != nil {
		up.Stop()
		return nil, fmt.Errorf("legate upstream refresh: %v\n%s", err, out)
	}
	b.logf("cache filled: %d upstreams × %d tools in %s", b.bigUps, bigTools, time.Since(t0).Round(time.Millisecond))
	b.big = &bigCache{cfg: cfg, state: state, up: up}
	return b.big, nil
}

func runCmd(ctx context.Context, argv ...string) (string, error) {
	var out strings.Builder
	cmd := execCommand(ctx, argv...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func (b *bench) p2(ctx context.Context) ([]row, error) {
	big, err := b.prepareBigCache(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { big.up.Stop(); big.up = nil }()
	want := b.bigUps * bigTools
	t0 := time.Now()
	lg, err := harness.StartLegate(ctx, b.dir, "p2-legate", b.bin, big.cfg, big.state)
	if err != nil {
		return nil, err
	}
	defer lg.Stop()
	b.logf("P2 legate serve ready after %s", time.Since(t0).Round(time.Millisecond))
	// Legate refreshes every upstream when it starts: let that finish
	// (no upstream request and Legate idle), then count from zero.
	if err := harness.WaitQuiet(big.up, 500*time.Millisecond, 60*time.Second); err != nil {
		return nil, err
	}
	settled, settleCPU, err := harness.WaitIdle(lg, 500*time.Millisecond, 5*time.Minute)
	if err != nil {
		return nil, err
	}
	startupCPU, err := harness.CPUSeconds(lg.Pid())
	if err != nil {
		return nil, err
	}
	b.logf("P2 legate serve idle %s after ready (%.1f s CPU since start, %.1f s while waiting)", settled.Round(time.Millisecond), startupCPU, settleCPU)
	if err := harness.ResetUpstreamStats(big.up); err != nil {
		return nil, err
	}
	hc := harness.NewHTTPClient()
	endpoints := []string{"http://" + big.up.Addr + "/all", "http://" + lg.Addr + "/mcp"}
	var raw [2]*harness.RawSession
	var sdk [2]*mcp.ClientSession
	for i, ep := range endpoints {
		if raw[i], err = harness.OpenRaw(ctx, hc, ep); err != nil {
			return nil, err
		}
		s, err := harness.OpenSessions(ctx, hc, ep, 1, 1, false)
		if err != nil {
			return nil, err
		}
		defer harness.CloseSessions(s)
		sdk[i] = s[0]
	}
	names := []string{"baseline", "through Legate"}
	check := func(t int, tools []string) error {
		n := len(tools)
		if t == 1 {
			n = upstreamTools(tools)
		}
		if n != want {
			return fmt.Errorf("tools/list %s returned %d upstream tools, want %d", names[t], n, want)
		}
		return nil
	}
	// Legate is measured b.lists times; the baseline (a go-sdk server that
	// takes far longer per list) and the go-sdk client, both informative,
	// fewer times.
	t0 = time.Now()
	perRound := max(1, b.lists/b.rounds)
	basePerRound := max(1, perRound/16)
	sdkPerRound := 1
	var lat, sdkLat [2][]time.Duration
	counts := [2]int{}
	for r := range b.rounds {
		for _, t := range order(r) {
			n := perRound
			if t == 0 {
				n = basePerRound
			}
			for i := range n + 1 { // one warm-up list
				d, tools, err := raw[t].ListRaw(ctx)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", names[t], err)
				}
				if err := check(t, tools); err != nil {
					return nil, err
				}
				counts[t] = len(tools)
				if i >= 1 {
					lat[t] = append(lat[t], d)
				}
			}
			for range sdkPerRound {
				t0 := time.Now()
				tools, err := harness.ListAll(ctx, sdk[t])
				d := time.Since(t0)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", names[t], err)
				}
				ns := make([]string, len(tools))
				for i, tl := range tools {
					ns[i] = tl.Name
				}
				if err := check(t, ns); err != nil {
					return nil, err
				}
				sdkLat[t] = append(sdkLat[t], d)
			}
		}
	}
	st, err := harness.UpstreamStats(big.up)
	if err != nil {
		return nil, err
	}
	if b.smoke && st.Requests != 0 {
		return nil, fmt.Errorf("listing through Legate caused %d upstream requests, want 0", st.Requests)
	}
	for t := range lat {
		slices.Sort(lat[t])
		slices.Sort(sdkLat[t])
	}
	pct := func(l [2][]time.Duration, q float64) [2]float64 {
		return [2]float64{us(harness.Percentile(l[0], q)), us(harness.Percentile(l[1], q))}
	}
	p50, p99, sdk50 := pct(lat, .5), pct(lat, .99), pct(sdkLat, .5)
	b.logf("P2 lists took %s", time.Since(t0).Round(time.Millisecond))
	b.logf("P2 tools/list of %d tools (%d/%d lists): baseline p50 %.2f ms, Legate p50 %.2f ms p99 %.2f ms (go-sdk client: %.2f / %.2f ms), upstream requests %d",
		want, len(lat[0]), len(lat[1]), p50[0]/1000, p50[1]/1000, p99[1]/1000, sdk50[0]/1000, sdk50[1]/1000, st.Requests)
	return []row{
		{Scenario: "P2", Metric: "tools/list p50",
			Note: fmt.Sprintf("%d upstreams × %d tools, %d lists (baseline %d), one session, plain HTTP client; baseline: one go-sdk server with the same %d tools", b.bigUps, bigTools, len(lat[1]), len(lat[0]), want),
			Unit: "µs", Baseline: p50[0], Legate: p50[1], Ratio: p50[1] / p50[0], Target: "≤ 5 ms", Result: benchkit.PassFail(p50[1] <= 5000)},
		{Scenario: "P2", Metric: "tools/list p99", Unit: "µs", Baseline: p99[0], Legate: p99[1], Ratio: p99[1] / p99[0]},
		{Scenario: "P2", Metric: "tools/list p50 with the go-sdk client", Note: fmt.Sprintf("%d lists, client decoding included", len(sdkLat[1])),
			Unit: "µs", Baseline: sdk50[0], Legate: sdk50[1], Ratio: sdk50[1] / sdk50[0]},
		{Scenario: "P2", Metric: "upstream tools listed", Unit: "", Baseline: float64(counts[0]), Legate: float64(want), Ratio: none,
			Target: fmt.Sprintf("= %d", want), Result: "PASS"},
		{Scenario: "P2", Metric: "upstream requests caused", Unit: "", Baseline: none, Legate: float64(st.Requests), Ratio: none,
			Target: "= 0", Result: benchkit.PassFail(st.Requests == 0)},
		{Scenario: "P2", Metric: fmt.Sprintf("legate serve CPU from exec to idle, %d upstreams up, cache filled", b.bigUps), Note: "start-up refresh of every upstream",
			Unit: "s", Baseline: none, Legate: startupCPU, Ratio: none},
	}, nil
}

// ---- P3: native call ----

func (b *bench) p3(ctx context.Context) ([]row, error) {
	bare, err := harness.StartSelf(ctx, b.dir, "p3-bare", "bare")
	if err != nil {
		return nil, err
	}
	defer bare.Stop()
	cfg, err := b.writeFile("p3.yaml", "connectors:\n  - {id: noop, type: noop}\n")
	if err != nil {
		return nil, err
	}
	lg, err := harness.StartLegateInProcess(ctx, b.dir, "p3-legate", cfg, filepath.Join(b.dir, "p3-state"))
	if err != nil {
		return nil, err
	}
	defer lg.Stop()
	var cs []int
	for _, c := range b.cs {
		if c <= 8 {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		cs = []int{1}
	}
	maxC := slices.Max(cs)
	hcs := []*http.Client{harness.NewHTTPClient(), harness.NewHTTPClient()}
	var targets [2][]*mcp.ClientSession
	for i, ep := range []string{"http://" + bare.Addr + "/mcp", "http://" + lg.Addr + "/mcp"} {
		s, err := harness.OpenSessions(ctx, hcs[i], ep, maxC, 8, false)
		if err != nil {
			return nil, err
		}
		defer harness.CloseSessions(s)
		targets[i] = s
	}
	calls := [2]harness.CallFunc{harness.ToolCall("nop", map[string]any{}), harness.ToolCall("noop__nop", map[string]any{})}
	procs := [2]*harness.Proc{bare, lg}
	type series struct{ rate, p50, cpu []float64 }
	res := map[int]*[2]series{}
	for _, c := range cs {
		res[c] = &[2]series{}
	}
	for r := range b.rounds {
		for _, c := range cs {
			for _, t := range order(r) {
				lr, err := harness.RunLoad(ctx, targets[t][:c], calls[t], b.warmup, b.dur, map[string]*harness.Proc{"server": procs[t]}, nil)
				if err != nil {
					return nil, fmt.Errorf("C=%d %s: %w", c, []string{"bare", "Legate"}[t], err)
				}
				s := &res[c][t]
				s.rate = append(s.rate, lr.Rate())
				s.p50 = append(s.p50, us(lr.P(0.5)))
				s.cpu = append(s.cpu, lr.CPUPerCall("server"))
				b.logf("P3 round %d C=%d %-6s %7.0f calls/s p50 %6.0f µs cpu/call %4.0f µs",
					r+1, c, []string{"bare", "Legate"}[t], lr.Rate(), us(lr.P(0.5)), lr.CPUPerCall("server"))
			}
		}
	}
	var rows []row
	for _, c := range cs {
		d, v := res[c][0], res[c][1]
		rr := row{Scenario: "P3", Metric: fmt.Sprintf("calls/s, C=%d", c), Unit: "calls/s",
			Baseline: benchkit.Median(d.rate), Legate: benchkit.Median(v.rate), Ratio: benchkit.Median(benchkit.Ratios(v.rate, d.rate))}
		if c == 1 {
			rr.Note = "baseline: same no-op handler on a bare go-sdk server"
		}
		if c == 8 {
			rr.Target = "≥ 0.8× bare"
			rr.Result = benchkit.PassFail(rr.Ratio >= 0.8)
		}
		rows = append(rows, rr)
		rows = append(rows, row{Scenario: "P3", Metric: fmt.Sprintf("p50 latency, C=%d", c), Unit: "µs",
			Baseline: benchkit.Median(d.p50), Legate: benchkit.Median(v.p50), Ratio: benchkit.Median(benchkit.Ratios(v.p50, d.p50))})
		rows = append(rows, row{Scenario: "P3", Metric: fmt.Sprintf("server CPU per call, C=%d", c), Unit: "µs",
			Baseline: benchkit.Median(d.cpu), Legate: benchkit.Median(v.cpu), Ratio: benchkit.Median(benchkit.Ratios(v.cpu, d.cpu))})
	}
	return rows, nil
}

// ---- P4: memory ----

// p4Legate starts `legate serve` (the binary bin) with 10 connectors and
// 10 upstreams and waits until its catalog is complete and its start-up
// refresh is over. The binary is read from disk, not from the page cache
// its build left (see [harness.Uncache]).
func (b *bench) p4Legate(ctx context.Context, up *harness.Proc, bin, name string) (*harness.Proc, error) {
	var sb strings.Builder
	sb.WriteString("connectors:\n")
	for i := range 5 {
		fmt.Fprintf(&sb, "  - {id: web%d, type: http, config: {base_url: \"http://%s/api%d/\", allow_private_networks: true}}\n", i, up.Addr, i)
		fmt.Fprintf(&sb, "  - {id: hook%d, type: webhook, config: {url: \"http://%s/hook%d\", allow_private_networks: true}}\n", i, up.Addr, i)
	}
	sb.WriteString("upstreams:\n")
	for i := range 10 {
		fmt.Fprintf(&sb, "  - {id: u%d, url: \"http://%s/u%d\"}\n", i, up.Addr, i)
	}
	cfg, err := b.writeFile("p4.yaml", sb.String())
	if err != nil {
		return nil, err
	}
	harness.Uncache(bin)
	lg, err := harness.StartLegate(ctx, b.dir, name, bin, cfg, filepath.Join(b.dir, name+"-state"))
	if err != nil {
		return nil, err
	}
	// 4 built-in tools (http.request, legate.approval_status,
	// legate.result_read, legate.search_tools) + 5 http.call + 5
	// webhook.send + 10 upstream echo.
	const want = 24
	deadline := time.Now().Add(10 * time.Second)
	for {
		var rz struct{ Tools int }
		resp, err := http.Get("http://" + lg.Addr + "/readyz")
		if err == nil {
			json.NewDecoder(resp.Body).Decode(&rz)
			resp.Body.Close()
		}
		if rz.Tools == want {
			break
		}
		if time.Now().After(deadline) {
			lg.Stop()
			return nil, fmt.Errorf("legate catalog holds %d tools after 10s, want %d", rz.Tools, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := harness.WaitQuiet(up, 300*time.Millisecond, 10*time.Second); err != nil {
		lg.Stop()
		return nil, err
	}
	return lg, nil
}

// sessionGrowth reads p's idle RSS, opens n sessions, and returns the idle
// RSS and the growth per session.
func (b *bench) sessionGrowth(ctx context.Context, p *harness.Proc, endpoint string, n int, sse bool) (idle, per float64, err error) {
	time.Sleep(b.settle)
	rss0, err := harness.RSSBytes(p.Pid())
	if err != nil {
		return 0, 0, err
	}
	ss, err := harness.OpenSessions(ctx, harness.NewHTTPClient(), endpoint, n, 8, sse)
	if err != nil {
		return 0, 0, err
	}
	defer harness.CloseSessions(ss)
	time.Sleep(b.settle)
	rss1, err := harness.RSSBytes(p.Pid())
	if err != nil {
		return 0, 0, err
	}
	return float64(rss0), float64(rss1-rss0) / float64(n), nil
}

func (b *bench) p4(ctx context.Context) ([]row, error) {
	up, err := harness.StartSelf(ctx, b.dir, "p4-upstreams", "upstream", "-servers", "10", "-tools", "1")
	if err != nil {
		return nil, err
	}
	defer up.Stop()
	// [variant][target]: variant 0 without the standalone SSE stream, 1 with it.
	var idle, per [2][2]float64
	for v, sse := range []bool{false, true} {
		for t := range 2 {
			var p *harness.Proc
			if t == 0 {
				p, err = harness.StartSelf(ctx, b.dir, fmt.Sprintf("p4-bare-%d", v), "bare")
			} else {
				p, err = b.p4Legate(ctx, up, b.bin, fmt.Sprintf("p4-legate-%d", v))
			}
			if err != nil {
				return nil, err
			}
			ep := "http://" + p.Addr + "/mcp"
			idle[v][t], per[v][t], err = b.sessionGrowth(ctx, p, ep, b.sessions, sse)
			p.Stop()
			if err != nil {
				return nil, err
			}
			b.logf("P4 %s %s: idle RSS %.1f MiB, %.1f KiB per idle session (%d sessions)",
				[]string{"bare  ", "Legate"}[t], []string{"without SSE", "with SSE"}[v], idle[v][t]/(1<<20), per[v][t]/1024, b.sessions)
		}
	}
	slim, slimIdle, err := b.p4Slim(ctx, up)
	if err != nil {
		return nil, err
	}
	b.logf("P4 slim  : idle RSS %.1f MiB", slimIdle/(1<<20))
	size, slimSize := fileSize(b.bin), fileSize(slim)
	mib := func(v float64) float64 { return v / (1 << 20) }
	kib := func(v float64) float64 { return v / 1024 }
	mb := func(v float64) float64 { return v / 1e6 }
	return []row{
		{Scenario: "P4", Metric: "idle RSS", Note: "Legate: 10 connectors + 10 upstreams; baseline: bare go-sdk server, one tool", Unit: "MiB",
			Baseline: mib(idle[0][0]), Legate: mib(idle[0][1]), Ratio: idle[0][1] / idle[0][0], Target: "≤ 40 MiB", Result: benchkit.PassFail(mib(idle[0][1]) <= 40)},
		{Scenario: "P4", Metric: "idle RSS, slim build", Note: "only the http and webhook connector types, as `make build-slim`; the same config", Unit: "MiB",
			Baseline: none, Legate: mib(slimIdle), Ratio: none, Target: "≤ 25 MiB", Result: benchkit.PassFail(mib(slimIdle) <= 25)},
		{Scenario: "P4", Metric: fmt.Sprintf("RSS per idle session, %d sessions, no standalone SSE", b.sessions), Unit: "KiB",
			Baseline: kib(per[0][0]), Legate: kib(per[0][1]), Ratio: per[0][1] / per[0][0], Target: "≤ 20 KiB", Result: benchkit.PassFail(kib(per[0][1]) <= 20)},
		{Scenario: "P4", Metric: fmt.Sprintf("RSS per idle session, %d sessions, with standalone SSE GET", b.sessions), Unit: "KiB",
			Baseline: kib(per[1][0]), Legate: kib(per[1][1]), Ratio: per[1][1] / per[1][0]},
		{Scenario: "P4", Metric: "binary size", Note: "static, -trimpath, stripped, as `make build`", Unit: "MB",
			Baseline: none, Legate: mb(size), Ratio: none, Target: "≤ 60 MB", Result: benchkit.PassFail(mb(size) <= 60)},
		{Scenario: "P4", Metric: "binary size, slim build", Unit: "MB", Baseline: none, Legate: mb(slimSize), Ratio: none},
	}, nil
}

// p4Slim builds the slim binary (unless -legate-slim named one) and
// returns it with its idle RSS under P4's config, which it can run: http
// and webhook connectors and upstreams.
func (b *bench) p4Slim(ctx context.Context, up *harness.Proc) (string, float64, error) {
	if b.slimBin == "" {
		bin, err := harness.BuildLegate(b.dir, "legate-slim", "custom", "connector_http", "connector_webhook")
		if err != nil {
			return "", 0, err
		}
		b.slimBin = bin
	}
	p, err := b.p4Legate(ctx, up, b.slimBin, "p4-slim")
	if err != nil {
		return "", 0, err
	}
	defer p.Stop()
	time.Sleep(b.settle)
	rss, err := harness.RSSBytes(p.Pid())
	return b.slimBin, float64(rss), err
}

// fileSize is the size of the file at path in bytes, NaN if unknown.
func fileSize(path string) float64 {
	fi, err := os.Stat(path)
	if err != nil {
		return none
	}
	return float64(fi.Size())
}

// ---- P5: cold start ----

// coldStart starts argv listening on addr and returns the time from exec
// to the first answered tools/list and the tools it held.
// It speaks plain HTTP (see harness.RawSession), so that the client's own decoding
// of thousands of tools is not counted.
func (b *bench) coldStart(ctx context.Context, name, addr string, argv ...string) (time.Duration, []string, error) {
	t0 := time.Now()
	p, err := harness.StartProc(ctx, b.dir, name, addr, argv...)
	if err != nil {
		return 0, nil, err
	}
	defer p.Stop()
	hc := harness.NewHTTPClient()
	deadline := t0.Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if err := p.Exited(); err != nil {
			return 0, nil, err
		}
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			time.Sleep(2 * time.Millisecond)
			continue
		}
		c.Close()
		rs, err := harness.OpenRaw(ctx, hc, "http://"+addr+"/mcp")
		if err != nil {
			time.Sleep(2 * time.Millisecond)
			continue
		}
		_, tools, err := rs.ListRaw(ctx)
		d := time.Since(t0)
		if err != nil {
			time.Sleep(2 * time.Millisecond)
			continue
		}
		return d, tools, nil
	}
	return 0, nil, fmt.Errorf("%s: no tools/list answered within 10s: %s", name, p.Tail())
}

func (b *bench) p5(ctx context.Context) ([]row, error) {
	big, err := b.prepareBigCache(ctx)
	if err != nil {
		return nil, err
	}
	if big.up != nil {
		big.up.Kill() // every upstream down
		big.up = nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	want := b.bigUps * bigTools
	var times [2][]float64
	listed := 0
	for r := range b.rounds {
		for _, t := range order(r) {
			addr, err := harness.FreeAddr()
			if err != nil {
				return nil, err
			}
			var d time.Duration
			var tools []string
			if t == 0 {
				d, tools, err = b.coldStart(ctx, "p5-bare", addr, exe, "bare", "-addr", addr)
			} else {
				d, tools, err = b.coldStart(ctx, "p5-legate", addr, b.bin, "serve", "--config", big.cfg, "--state-dir", big.state, "--listen", addr)
			}
			if err != nil {
				return nil, err
			}
			if t == 1 {
				if listed = upstreamTools(tools); listed != want {
					return nil, fmt.Errorf("first tools/list after a cold start held %d cached upstream tools, want %d", listed, want)
				}
			}
			times[t] = append(times[t], float64(d)/float64(time.Millisecond))
			b.logf("P5 round %d %-6s first tools/list after %.1f ms (%d tools)", r+1, []string{"bare", "Legate"}[t], float64(d)/float64(time.Millisecond), len(tools))
		}
	}
	return []row{
		{Scenario: "P5", Metric: "exec to first answered tools/list", Note: fmt.Sprintf("every upstream down, %d tools cached; baseline: bare go-sdk server", want), Unit: "ms",
			Baseline: benchkit.Median(times[0]), Legate: benchkit.Median(times[1]), Ratio: benchkit.Median(benchkit.Ratios(times[1], times[0])), Target: "≤ 150 ms", Result: benchkit.PassFail(benchkit.Median(times[1]) <= 150)},
		{Scenario: "P5", Metric: "cached upstream tools in that list", Unit: "", Baseline: none, Legate: float64(listed), Ratio: none,
			Target: fmt.Sprintf("= %d", want), Result: benchkit.PassFail(listed == want)},
	}, nil
}

// upstreamTools counts the upstream tools (mcp__…) among the names Legate listed.
func upstreamTools(names []string) int {
	n := 0
	for _, name := range names {
		if strings.HasPrefix(name, "mcp__") {
			n++
		}
	}
	return n
}
