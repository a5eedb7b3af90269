// Package gatewaybench is benchmark P10: other MCP gateways beside
// Legate, on P1's upstream and load client. Each peer (TBXark/mcp-proxy,
// docker/mcp-gateway; built by Script) fronts P1's echo upstream, as do
// Legate, configured as P1 configures it, and P1's plain reverse proxy;
// the same go-sdk sessions call echo through each, in the same rounds,
// the order rotating. The rows are Legate against each: calls/s, p50
// latency and CPU per call of each gateway's process.
package gatewaybench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
	"github.com/legate-mcp/legate/cmd/legate-bench/harness"
)

// scenario is the harness's name of P10.
const scenario = "P10"

// side is one way to the upstream: Legate, the plain proxy or a peer.
type side struct {
	name string
	proc *harness.Proc
	tool string // the upstream's echo as the side names it
	note string // said once, in its first row
	sess []*mcp.ClientSession
	res  map[int]*series
}

type series struct{ rate, p50, cpu []float64 }

// ready is a peer installed here, with its build.
type ready struct {
	peer
	build build
}

// installed splits the peers into those installed in dir and the SKIP
// rows of the others, each naming Script.
func installed(dir string, logf func(string, ...any)) ([]ready, []benchkit.Row) {
	var ok []ready
	var skips []benchkit.Row
	for _, p := range peers {
		b, err := readBuild(dir, p)
		if err != nil {
			logf("%s %s skipped: %v", scenario, p.name, err)
			skips = append(skips, benchkit.Skip(scenario, p.name+": "+err.Error()))
			continue
		}
		logf("%s %s %s", scenario, p.name, b)
		ok = append(ok, ready{peer: p, build: b})
	}
	return ok, skips
}

// Run measures P10. Without any peer installed it starts nothing and
// returns a SKIP row per peer; a peer that is missing is skipped alone.
func Run(ctx context.Context, o benchkit.Options) ([]benchkit.Row, error) {
	dir := Dir()
	found, skips := installed(dir, o.Logf)
	if len(found) == 0 {
		return skips, nil
	}
	up, err := harness.StartSelf(ctx, o.Dir, "p10-upstream", "upstream", "-servers", "1", "-tools", "1")
	if err != nil {
		return nil, err
	}
	defer up.Stop()
	sides, err := startSides(ctx, o, dir, up, found)
	for _, s := range sides {
		defer s.stop()
	}
	if err != nil {
		return nil, err
	}
	if err := measure(ctx, o, sides); err != nil {
		return nil, err
	}
	return append(rows(o.C, sides), skips...), nil
}

// startSides starts Legate as P1 runs it, the plain proxy and each found
// peer, each in front of up, and opens the load's sessions to each,
// checking that echo answers through it.
func startSides(ctx context.Context, o benchkit.Options, dir string, up *harness.Proc, found []ready) ([]*side, error) {
	upstream := "http://" + up.Addr + "/mcp"
	var sides []*side
	cfg, err := harness.WriteFile(o.Dir, "p10.yaml", legateConfig(upstream))
	if err != nil {
		return nil, err
	}
	lg, err := harness.StartLegate(ctx, o.Dir, "p10-legate", o.Legate, cfg, filepath.Join(o.Dir, "p10-state"))
	if err != nil {
		return nil, err
	}
	sides = append(sides, &side{name: "Legate", proc: lg})
	px, err := harness.StartSelf(ctx, o.Dir, "p10-proxy", "proxy", "-target", "http://"+up.Addr)
	if err != nil {
		return sides, err
	}
	sides = append(sides, &side{name: "the plain proxy", proc: px, note: "reference: httputil.ReverseProxy, as in P1"})
	endpoints := []string{"http://" + lg.Addr + "/mcp", "http://" + px.Addr + "/mcp"}
	for _, p := range found {
		s, endpoint, err := startPeer(ctx, o, dir, p, upstream)
		if err != nil {
			return sides, err
		}
		sides = append(sides, s)
		endpoints = append(endpoints, endpoint)
	}
	maxC := slices.Max(o.C)
	for i, s := range sides {
		if s.tool, err = echoTool(ctx, s.proc, endpoints[i]); err != nil {
			return sides, fmt.Errorf("%s: %w", s.name, err)
		}
		if s.sess, err = harness.OpenSessions(ctx, harness.NewHTTPClient(), endpoints[i], maxC, 8, false); err != nil {
			return sides, fmt.Errorf("%s: %w", s.name, err)
		}
		res, err := s.sess[0].CallTool(ctx, &mcp.CallToolParams{Name: s.tool, Arguments: echoArgs})
		if err != nil {
			return sides, fmt.Errorf("%s: %s: %w", s.name, s.tool, err)
		}
		if got := harness.TextOf(res); res.IsError || got != echoArgs["text"] {
			return sides, fmt.Errorf("%s: %s answered %q (isError %v), want %q", s.name, s.tool, got, res.IsError, echoArgs["text"])
		}
	}
	return sides, nil
}

// legateConfig is P1's: the upstream, and a policy allowing its echo.
func legateConfig(upstream string) string {
	return fmt.Sprintf(`upstreams:
  - {id: %s, url: %q}
policy:
  rules:
    - {tool: "mcp.%s.echo", action: allow}
`, upstreamID, upstream, upstreamID)
}

var echoArgs = map[string]any{"text": "hello"}

// startPeer runs p in front of upstream on a free loopback port.
func startPeer(ctx context.Context, o benchkit.Options, dir string, p ready, upstream string) (*side, string, error) {
	addr, err := harness.FreeAddr()
	if err != nil {
		return nil, "", err
	}
	scratch := filepath.Join(o.Dir, "p10-"+p.bin)
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return nil, "", err
	}
	argv, env, endpoint, err := p.launch(launchEnv{bin: filepath.Join(dir, "bin", p.bin), scratch: scratch, addr: addr, upstream: upstream})
	if err != nil {
		return nil, "", err
	}
	proc, err := harness.StartProcEnv(ctx, o.Dir, "p10-"+p.bin, addr, env, argv...)
	if err != nil {
		return nil, "", err
	}
	name := p.name + " " + p.build.Version
	return &side{name: name, proc: proc, note: fmt.Sprintf("%s %s; %s", p.name, p.build, p.differs)}, endpoint, nil
}

// echoTool waits (30 s at most) until a session to endpoint lists the
// upstream's echo, and returns its name there.
func echoTool(ctx context.Context, p *harness.Proc, endpoint string) (string, error) {
	deadline := time.Now().Add(30 * time.Second)
	var last error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if err := p.Exited(); err != nil {
			return "", err
		}
		name, err := listEcho(ctx, endpoint)
		if err == nil {
			return name, nil
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return "", fmt.Errorf("no echo tool at %s after 30s: %v (the end of its log: %.600s)", endpoint, last, p.Tail())
}

func listEcho(ctx context.Context, endpoint string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ss, err := harness.OpenSessions(ctx, harness.NewHTTPClient(), endpoint, 1, 1, false)
	if err != nil {
		return "", err
	}
	defer harness.CloseSessions(ss)
	tools, err := harness.ListAll(ctx, ss[0])
	if err != nil {
		return "", err
	}
	var names []string
	for _, t := range tools {
		if t.Name == "echo" || strings.HasSuffix(t.Name, "_echo") {
			return t.Name, nil
		}
		names = append(names, t.Name)
	}
	return "", fmt.Errorf("tools/list has no echo: %q", names)
}

// measure runs the load through every side at every C, o.Rounds times,
// the order rotating each round.
func measure(ctx context.Context, o benchkit.Options, sides []*side) error {
	for _, s := range sides {
		s.res = map[int]*series{}
		for _, c := range o.C {
			s.res[c] = &series{}
		}
	}
	for r := range o.Rounds {
		for _, c := range o.C {
			for k := range sides {
				s := sides[(k+r)%len(sides)]
				lr, err := harness.RunLoad(ctx, s.sess[:c], harness.ToolCall(s.tool, echoArgs), o.Warmup, o.Window, map[string]*harness.Proc{"gateway": s.proc}, nil)
				if err != nil {
					return fmt.Errorf("C=%d %s: %w", c, s.name, err)
				}
				x := s.res[c]
				x.rate = append(x.rate, lr.Rate())
				x.p50 = append(x.p50, float64(lr.P(0.5))/float64(time.Microsecond))
				x.cpu = append(x.cpu, lr.CPUPerCall("gateway"))
				o.Logf("%s round %d C=%d %-28s %7.0f calls/s p50 %6.0f µs cpu/call %5.0f µs", scenario, r+1, c, s.name,
					lr.Rate(), x.p50[len(x.p50)-1], x.cpu[len(x.cpu)-1])
			}
		}
	}
	return nil
}

// rows are Legate (sides[0]) against each other side at each C: calls/s,
// p50 latency and CPU per call, the ratio Legate ÷ the other.
func rows(cs []int, sides []*side) []benchkit.Row {
	lg := sides[0]
	var out []benchkit.Row
	for _, s := range sides[1:] {
		for i, c := range cs {
			b, l := s.res[c], lg.res[c]
			row := func(metric, unit string, f func(*series) []float64) benchkit.Row {
				return benchkit.Row{Scenario: scenario, Metric: fmt.Sprintf("%s, C=%d, Legate against %s (baseline; ratio: Legate ÷ it)", metric, c, s.name),
					Unit: unit, Baseline: benchkit.Median(f(b)), Legate: benchkit.Median(f(l)), Ratio: benchkit.Median(benchkit.Ratios(f(l), f(b)))}
			}
			rate := row("calls/s", "calls/s", func(x *series) []float64 { return x.rate })
			if i == 0 {
				rate.Note = s.note
			}
			out = append(out, rate,
				row("p50 latency", "µs", func(x *series) []float64 { return x.p50 }),
				row("CPU per call of the gateway's process", "µs", func(x *series) []float64 { return x.cpu }))
		}
	}
	return out
}

func (s *side) stop() {
	harness.CloseSessions(s.sess)
	s.proc.Stop()
}
