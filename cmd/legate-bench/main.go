// Command legate-bench is Legate's performance harness: `make bench` runs
// it, `make bench-smoke` runs it once, briefly, as a check that every
// scenario still runs. docs/BENCHMARKS.md describes the method.
//
// It builds the real legate binary, starts every server it needs on
// 127.0.0.1 as a separate process (so that CPU time and memory are read
// per process from /proc), drives them with go-sdk clients from this
// process, and prints a markdown table: each scenario beside its baseline,
// measured in interleaved rounds, medians and ratios, and PASS/FAIL per
// target.
//
//	go run ./cmd/legate-bench            # the full run (a few minutes)
//	go run ./cmd/legate-bench -smoke     # every scenario once, briefly
//	go run ./cmd/legate-bench -only P1,P3 -rounds 3
//	go run ./cmd/legate-bench -profile /tmp/prof   # CPU and allocation profiles of Legate
//	go run ./cmd/legate-bench -profile /tmp/prof -only github   # of P7's GitHub read alone
//	go run ./cmd/legate-bench -soak                # the soak (package soak), a few minutes
//	go run ./cmd/legate-bench -curves docs/curves  # the cost curves (package curvebench), 15–20 minutes
//
// The hidden subcommands upstream, hop, bare, legate, proxy and soakupstream
// are the servers it starts (see harness/servers.go and soak/upstream.go).
// The processes, servers and load generator the scenarios and the soak
// share are package harness.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
	"github.com/legate-mcp/legate/cmd/legate-bench/curvebench"
	"github.com/legate-mcp/legate/cmd/legate-bench/harness"
	"github.com/legate-mcp/legate/cmd/legate-bench/saasbench"
	"github.com/legate-mcp/legate/cmd/legate-bench/soak"
)

func main() {
	if len(os.Args) > 1 {
		sub := map[string]func([]string) error{"upstream": harness.UpstreamMain, "hop": benchkit.HopMain, "bare": harness.BareMain, "legate": harness.LegateMain, "proxy": harness.ProxyMain, "soakupstream": soak.UpstreamMain}
		if f, ok := sub[os.Args[1]]; ok {
			if err := f(os.Args[2:]); err != nil {
				fmt.Fprintf(os.Stderr, "legate-bench %s: %v\n", os.Args[1], err)
				os.Exit(1)
			}
			return
		}
	}
	os.Exit(run())
}

func run() int {
	smoke := flag.Bool("smoke", false, "every scenario once, very short (200 ms windows, C=1, 100 sessions, 10 upstreams in P2 and P5): checks that each produces numbers, never speed")
	rounds := flag.Int("rounds", 5, "rounds; each measures baseline and Legate back to back, alternating which goes first")
	dur := flag.Duration("duration", 2*time.Second, "measured window of each load measurement")
	warmup := flag.Duration("warmup", 500*time.Millisecond, "warm-up before each load measurement")
	csFlag := flag.String("c", "1,8,32", "concurrent sessions of P1 (P3 uses those ≤ 8)")
	lists := flag.Int("lists", 200, "P2: tools/list calls timed through Legate, over all rounds (the slow baseline gets a sixteenth)")
	sessions := flag.Int("sessions", 1000, "P4: idle sessions opened")
	bigUps := flag.Int("upstreams", 50, "P2 and P5: upstreams of 100 tools each")
	only := flag.String("only", "", "run only these scenarios, e.g. P1,P3; with -profile, only these loads (P1, P3, P7, P5, P2) or P7's reads by name (github, slack, …)")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	legateBin := flag.String("legate", "", "use this legate binary instead of building ./cmd/legate")
	slimBin := flag.String("legate-slim", "", "P4: use this slim legate binary (http and webhook connector types) instead of building one")
	keep := flag.Bool("keep", false, "keep the temporary directory (configs, state, logs)")
	profile := flag.String("profile", "", "instead of the scenarios, profile Legate (in-process) under the P1, P3 and P7 loads at the highest C ≤ 8, its start-up on the P5 cache and tools/list of that cache, writing CPU and allocation profiles in this directory")
	selfProfile := flag.String("selfprofile", "", "write a CPU profile of the harness itself (the load clients) to this file")
	soakRun := flag.Bool("soak", false, "instead of the scenarios, the soak (package soak): -sessions concurrent sessions, -calls calls, faults injected; fails on any other error or on growth")
	soakCfg := soak.Flags()
	curvesOut := flag.String("curves", "", "instead of the scenarios, the cost curves (package curvebench): measure them, print their tables and write their SVG plots into this directory")
	curvesOnly := flag.String("curves-only", "", "curves: only these, comma-separated (tools, sessions, upstreams, approvals, audit)")
	curvesAudit := flag.Duration("curves-audit", 10*time.Minute, "curves: how long the audit curve's calls run (smoke: 5s)")
	curvesRate := flag.Int("curves-audit-rate", 1000, "curves: the audit curve's calls per second (smoke: 200)")
	flag.Parse()

	if *selfProfile != "" {
		f, err := os.Create(*selfProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "legate-bench:", err)
			return 1
		}
		pprof.StartCPUProfile(f)
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *smoke {
		defaults := map[string]func(){
			"rounds":            func() { *rounds = 1 },
			"duration":          func() { *dur = 200 * time.Millisecond },
			"warmup":            func() { *warmup = 50 * time.Millisecond },
			"c":                 func() { *csFlag = "1" },
			"lists":             func() { *lists = 10 },
			"sessions":          func() { *sessions = 100 },
			"upstreams":         func() { *bigUps = 10 },
			"curves-audit":      func() { *curvesAudit = 5 * time.Second },
			"curves-audit-rate": func() { *curvesRate = 200 },
		}
		for name, f := range defaults {
			if !set[name] {
				f()
			}
		}
	}
	if *profile != "" && !set["duration"] {
		*dur = 10 * time.Second
	}
	var cs []int
	for f := range strings.SplitSeq(*csFlag, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 {
			fmt.Fprintf(os.Stderr, "legate-bench: -c: bad concurrency %q\n", f)
			return 2
		}
		cs = append(cs, c)
	}
	if *rounds < 1 {
		fmt.Fprintln(os.Stderr, "legate-bench: -rounds must be ≥ 1")
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	load0 := harness.LoadAvg()
	dir, err := os.MkdirTemp("", "legate-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "legate-bench:", err)
		return 1
	}
	defer harness.StopAll()
	if *keep {
		fmt.Fprintln(os.Stderr, "legate-bench: keeping", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	go func() { <-ctx.Done(); harness.StopAll() }()

	b := &bench{dir: dir, smoke: *smoke, rounds: *rounds, warmup: *warmup, dur: *dur, cs: cs, lists: *lists, sessions: *sessions,
		bigUps: *bigUps, settle: time.Second}
	if b.smoke {
		b.settle = 200 * time.Millisecond
	}
	b.bin = *legateBin
	b.slimBin = *slimBin
	if b.bin == "" {
		t0 := time.Now()
		if b.bin, err = harness.BuildLegate(dir, "legate"); err != nil {
			fmt.Fprintln(os.Stderr, "legate-bench:", err)
			return 1
		}
		b.logf("built ./cmd/legate in %s", time.Since(t0).Round(time.Millisecond))
	}

	want := map[string]bool{}
	for s := range strings.SplitSeq(*only, ",") {
		if s = strings.ToUpper(strings.TrimSpace(s)); s != "" {
			want[s] = true
		}
	}
	if *profile != "" {
		if err := b.profile(ctx, *profile, want); err != nil {
			fmt.Fprintln(os.Stderr, "legate-bench: profile:", err)
			return 1
		}
		return 0
	}

	if *curvesOut != "" {
		co := curvebench.Options{Legate: b.bin, Dir: b.dir, Out: *curvesOut, Smoke: b.smoke, Window: b.dur, Warmup: b.warmup,
			Audit: *curvesAudit, AuditRate: *curvesRate, Logf: b.logf}
		if *curvesOnly != "" {
			co.Only = strings.Split(*curvesOnly, ",")
		}
		if err := curvebench.Run(ctx, co, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "legate-bench:", err)
			return 1
		}
		return 0
	}

	if *soakRun {
		if err := soak.Run(ctx, benchkit.Options{Legate: b.bin, Dir: b.dir, Logf: b.logf}, b.sessions, soakCfg); err != nil {
			fmt.Fprintln(os.Stderr, "legate-bench:", err)
			return 1
		}
		return 0
	}

	scenarios := []struct {
		name string
		run  func(context.Context) ([]row, error)
	}{
		{"P1", b.p1}, {"P2", b.p2}, {"P3", b.p3}, {"P4", b.p4}, {"P5", b.p5}, {"P6", b.p6}, {"P7", b.p7}, {"P7b", b.p7b}, {"P8", b.p8}, {"P9", b.p9}, {"P10", b.p10},
	}
	var rows []row
	var failed []string
	for _, s := range scenarios {
		if len(want) > 0 && !want[strings.ToUpper(s.name)] {
			continue
		}
		t0 := time.Now()
		b.logf("%s…", s.name)
		r, err := s.run(ctx)
		if err == nil {
			err = checkNumbers(r)
		}
		if err != nil {
			b.logf("%s FAILED TO RUN: %v", s.name, err)
			failed = append(failed, s.name)
			rows = append(rows, row{Scenario: s.name, Metric: "failed to run: " + harness.FirstLine(err.Error()), Baseline: none, Legate: none, Ratio: none, Result: "ERROR"})
			if ctx.Err() != nil {
				break
			}
			continue
		}
		b.logf("%s done in %s", s.name, time.Since(t0).Round(time.Millisecond))
		rows = append(rows, r...)
	}
	if b.big != nil && b.big.up != nil {
		b.big.up.Stop()
	}

	elapsed := time.Since(start)
	fmt.Println(harness.MachineLine())
	mode := fmt.Sprintf("%d rounds, %s windows after %s warm-up, C=%s", b.rounds, b.dur, b.warmup, *csFlag)
	if b.smoke {
		mode = "smoke: " + mode + " (numbers checked, speed not judged)"
	}
	fmt.Printf("Run: %s; %s; took %s; load average %s at start, %s at end.\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), mode,
		elapsed.Round(time.Second), load0, harness.LoadAvg())
	printTable(os.Stdout, rows, !b.smoke)
	if *jsonOut != "" {
		out, _ := json.MarshalIndent(map[string]any{"machine": harness.MachineLine(), "smoke": b.smoke, "rounds": b.rounds,
			"duration": b.dur.String(), "elapsed": elapsed.String(), "rows": jsonRows(rows)}, "", "  ")
		if err := os.WriteFile(*jsonOut, out, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "legate-bench:", err)
			return 1
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "legate-bench: %s failed to run\n", strings.Join(failed, ", "))
		return 1
	}
	return 0
}

// checkNumbers refuses a scenario whose rows hold no number (a
// measurement that silently produced nothing).
func checkNumbers(rows []row) error {
	if len(rows) == 0 {
		return fmt.Errorf("no results")
	}
	for _, r := range rows {
		if r.Legate != r.Legate && r.Result != "SKIP" { // NaN
			return fmt.Errorf("%s: no value", r.Metric)
		}
	}
	return nil
}

// jsonRows replaces NaN (not JSON) by nulls.
func jsonRows(rows []row) []map[string]any {
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		num := func(v float64) any {
			if v != v {
				return nil
			}
			return v
		}
		out[i] = map[string]any{"scenario": r.Scenario, "metric": r.Metric, "note": r.Note, "unit": r.Unit,
			"baseline": num(r.Baseline), "legate": num(r.Legate), "ratio": num(r.Ratio), "target": r.Target, "result": r.Result}
	}
	return out
}

// execCommand is exec.CommandContext with the child killed if we die.
func execCommand(ctx context.Context, argv ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// profile runs the P1, P3 and P7 loads, the P5 start-up and P2's lists
// against Legate in-process under runtime/pprof and leaves the profiles in
// out: all of them, or those want names (P7 also by its reads' names).
func (b *bench) profile(ctx context.Context, out string, want map[string]bool) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	out, _ = filepath.Abs(out)
	c := 1
	for _, x := range b.cs {
		if x <= 8 {
			c = max(c, x)
		}
	}
	b.cs, b.rounds, b.warmup = []int{c}, 1, max(b.warmup, time.Second)
	reads := map[string]bool{} // P7's reads want names
	for name := range want {
		if !strings.HasPrefix(name, "P") {
			reads[strings.ToLower(name)] = true
		}
	}
	does := func(load string) bool {
		return len(want) == 0 || want[load] || load == "P7" && len(reads) > 0
	}
	var wrote []string
	if does("P1") {
		if err := b.profileForward(ctx, out, c); err != nil {
			return err
		}
		wrote = append(wrote, "forward.cpu.pprof", "forward.allocs.pprof")
	}
	if does("P3") {
		if err := b.profileNative(ctx, out, c); err != nil {
			return err
		}
		wrote = append(wrote, "native.cpu.pprof", "native.allocs.pprof")
	}
	if does("P7") {
		if err := b.profileSaaS(ctx, out, c, reads); err != nil {
			return err
		}
		wrote = append(wrote, "saas.cpu.pprof", "saas.allocs.pprof")
	}
	if does("P5") || does("P2") {
		if err := b.profileCache(ctx, out, does("P5"), does("P2")); err != nil {
			return err
		}
		if does("P5") {
			wrote = append(wrote, "startup.cpu.pprof")
		}
		if does("P2") {
			wrote = append(wrote, "list.cpu.pprof")
		}
	}
	if len(wrote) == 0 {
		return fmt.Errorf("-only names nothing to profile (P1, P3, P7, P5, P2, or a P7 read)")
	}
	for _, f := range wrote {
		fmt.Printf("wrote %s\n", filepath.Join(out, f))
	}
	fmt.Printf("read them with e.g.: go tool pprof -top %s\n", filepath.Join(out, wrote[0]))
	return nil
}

// profileForward profiles Legate forwarding P1's calls at concurrency c.
func (b *bench) profileForward(ctx context.Context, out string, c int) error {
	up, err := harness.StartSelf(ctx, b.dir, "prof-upstream", "upstream", "-servers", "1", "-tools", "1")
	if err != nil {
		return err
	}
	defer up.Stop()
	cfg, err := b.writeFile("prof-p1.yaml", fmt.Sprintf("upstreams:\n  - {id: up, url: \"http://%s/mcp\"}\npolicy:\n  rules:\n    - {tool: \"mcp.up.echo\", action: allow}\n", up.Addr))
	if err != nil {
		return err
	}
	cpu, allocs := filepath.Join(out, "forward.cpu.pprof"), filepath.Join(out, "forward.allocs.pprof")
	lg, err := harness.StartLegateInProcess(ctx, b.dir, "prof-legate", cfg, filepath.Join(b.dir, "prof-state"), "-cpuprofile", cpu, "-memprofile", allocs)
	if err != nil {
		return err
	}
	rows, err := b.forwarded(ctx, up, lg, nil, "P1 (in-process)")
	lg.Stop()
	if err != nil {
		return err
	}
	printTable(os.Stdout, rows[:3], false)
	return nil
}

// profileNative profiles Legate answering P3's no-op native calls.
func (b *bench) profileNative(ctx context.Context, out string, c int) error {
	cfg3, err := b.writeFile("prof-p3.yaml", "connectors:\n  - {id: noop, type: noop}\n")
	if err != nil {
		return err
	}
	cpu3, allocs3 := filepath.Join(out, "native.cpu.pprof"), filepath.Join(out, "native.allocs.pprof")
	lg3, err := harness.StartLegateInProcess(ctx, b.dir, "prof-legate3", cfg3, filepath.Join(b.dir, "prof-state3"), "-cpuprofile", cpu3, "-memprofile", allocs3)
	if err != nil {
		return err
	}
	sess, err := harness.OpenSessions(ctx, harness.NewHTTPClient(), "http://"+lg3.Addr+"/mcp", c, 8, false)
	if err != nil {
		lg3.Stop()
		return err
	}
	lr, err := harness.RunLoad(ctx, sess, harness.ToolCall("noop__nop", map[string]any{}), b.warmup, b.dur, map[string]*harness.Proc{"legate": lg3}, nil)
	harness.CloseSessions(sess)
	lg3.Stop()
	if err != nil {
		return err
	}
	b.logf("native no-op C=%d: %.0f calls/s, %.0f µs Legate CPU per call", c, lr.Rate(), lr.CPUPerCall("legate"))
	return nil
}

// profileSaaS profiles P7's reads, one connector after another, in one
// profile: every read, or those only names.
func (b *bench) profileSaaS(ctx context.Context, out string, c int, only map[string]bool) error {
	pcfg, env, reads, stopStandIn, err := saasbench.ProfileSetup()
	if err != nil {
		return err
	}
	defer stopStandIn()
	var names []string
	for _, r := range reads {
		names = append(names, r.Name)
	}
	for name := range only {
		if !slices.Contains(names, name) {
			return fmt.Errorf("-only names %q, neither a load nor one of P7's reads (%s)", name, strings.Join(names, ", "))
		}
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v) // the in-process Legate reads its credentials from the environment it inherits
	}
	cfg7, err := b.writeFile("prof-p7.yaml", pcfg)
	if err != nil {
		return err
	}
	cpu7, allocs7 := filepath.Join(out, "saas.cpu.pprof"), filepath.Join(out, "saas.allocs.pprof")
	lg7, err := harness.StartLegateInProcess(ctx, b.dir, "prof-legate7", cfg7, filepath.Join(b.dir, "prof-state7"), "-cpuprofile", cpu7, "-memprofile", allocs7)
	if err != nil {
		return err
	}
	sess7, err := harness.OpenSessions(ctx, harness.NewHTTPClient(), "http://"+lg7.Addr+"/mcp", c, 8, false)
	if err != nil {
		lg7.Stop()
		return err
	}
	for _, r := range reads {
		if len(only) > 0 && !only[r.Name] {
			continue
		}
		lr, err := harness.RunLoad(ctx, sess7, harness.ToolCall(r.Tool, r.Args), b.warmup, b.dur, map[string]*harness.Proc{"legate": lg7}, nil)
		if err != nil {
			harness.CloseSessions(sess7)
			lg7.Stop()
			return fmt.Errorf("%s: %w", r.Name, err)
		}
		b.logf("P7 %s C=%d: %.0f calls/s, %.0f µs Legate CPU per call", r.Name, c, lr.Rate(), lr.CPUPerCall("legate"))
	}
	harness.CloseSessions(sess7)
	lg7.Stop()
	return nil
}

// profileCache profiles, on P5's large cache, Legate's start-up with every
// upstream down (startup) and tools/list of the whole cache (list).
func (b *bench) profileCache(ctx context.Context, out string, startup, list bool) error {
	big, err := b.prepareBigCache(ctx)
	if err != nil {
		return err
	}
	big.up.Kill()
	big.up = nil
	if startup {
		t0 := time.Now()
		lg5, err := harness.StartLegateInProcess(ctx, b.dir, "prof-legate5", big.cfg, big.state, "-cpuprofile", filepath.Join(out, "startup.cpu.pprof"))
		if err != nil {
			return err
		}
		b.logf("start-up with %d cached tools: ready after %s", b.bigUps*bigTools, time.Since(t0).Round(time.Millisecond))
		lg5.Stop()
	}
	if !list {
		return nil
	}
	cpu2 := filepath.Join(out, "list.cpu.pprof")
	lg2, err := harness.StartLegateInProcess(ctx, b.dir, "prof-legate2", big.cfg, big.state, "-cpuprofile", cpu2, "-profile-serving")
	if err != nil {
		return err
	}
	rs, err := harness.OpenRaw(ctx, harness.NewHTTPClient(), "http://"+lg2.Addr+"/mcp")
	if err != nil {
		lg2.Stop()
		return err
	}
	var lists []time.Duration
	for deadline := time.Now().Add(b.dur); time.Now().Before(deadline); {
		d, _, err := rs.ListRaw(ctx)
		if err != nil {
			lg2.Stop()
			return err
		}
		lists = append(lists, d)
	}
	lg2.Stop()
	slices.Sort(lists)
	b.logf("tools/list of %d tools: %d lists, p50 %s", b.bigUps*bigTools, len(lists), harness.Percentile(lists, .5))
	return nil
}
