package curvebench

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/cmd/legate-bench/harness"
	"github.com/legate-mcp/legate/cmd/legate-bench/searchbench"
)

// toolsPerUpstream is the tools of each upstream of the tools curve: the
// cache grows by upstreams of this many tools, as P2's does.
const toolsPerUpstream = 1000

// searchQuery is what the gateway's legate.search_tools is asked over the
// cache of filler tools: two words every filler tool's description holds
// and a third none does, so that every tool is a candidate (the worst case
// for an index).
const searchQuery = "filler tool returns whatever arguments invoice"

// toolCurves measures tools/list and legate.search_tools against the
// number of cached tools: `legate serve` over a state directory whose
// cache `legate upstream refresh` filled (as P2 and P5 prepare theirs),
// and profiles.Search in this process over P9's catalog of realistic
// names grown to the same sizes.
func toolCurves(ctx context.Context, o Options) ([]Curve, error) {
	sizes := pick(o, []int{1000, 2000}, []int{1000, 10000, 100000})
	list := Metric{Name: "tools/list p50, through Legate", Unit: "ms", Expect: Linear}
	list99 := Metric{Name: "tools/list p99, through Legate", Unit: "ms", Expect: Linear}
	gw := Metric{Name: "legate.search_tools p50, through Legate (every tool a candidate)", Unit: "ms", Expect: Linear}
	inproc := Metric{Name: "profiles.Search p50, in-process, P9's catalog", Unit: "ms", Expect: Linear}
	inprocCPU := Metric{Name: "profiles.Search p50 CPU, in-process, P9's catalog", Unit: "ms", Expect: Linear}
	for _, n := range sizes {
		l, s, err := throughGateway(ctx, o, n)
		if err != nil {
			return nil, fmt.Errorf("%d tools: %w", n, err)
		}
		x := float64(n)
		list.Points = append(list.Points, Point{x, l[0]})
		list99.Points = append(list99.Points, Point{x, l[1]})
		gw.Points = append(gw.Points, Point{x, s})

		cat, err := searchbench.CatalogOf(n/searchbench.ToolsPerUpstream, searchbench.ToolsPerUpstream)
		if err != nil {
			return nil, err
		}
		lat, err := searchbench.Latencies(ctx, cat, pick(o, 100, 1000))
		if err != nil {
			return nil, err
		}
		inproc.Points = append(inproc.Points, Point{x, lat[0]})
		inprocCPU.Points = append(inprocCPU.Points, Point{x, lat[2]})
		o.Logf("curves: %d tools: tools/list p50 %.2f ms p99 %.2f ms; search_tools p50 %.3f ms through Legate, %.3f ms in-process", n, l[0], l[1], s, lat[0])
	}
	gateway := fmt.Sprintf("Through Legate: the real binary over a cache of upstreams of %d tools each (the harness's filler tools), "+
		"the upstreams up and Legate idle after its start-up refresh", toolsPerUpstream)
	listNote := gateway + "; tools/list timed on the wire (plain HTTP client, every page), after 3 untimed lists."
	searchNote := fmt.Sprintf("%s; legate.search_tools (limit 5) with a go-sdk client, query %q. In-process: `profiles.Search` (limit 5) "+
		"over P9's catalog (verbs × objects × services) of the same size, P9's twelve queries in turn.", gateway, searchQuery)
	return []Curve{
		{ID: "tools-list", Title: "tools/list against cached tools", Work: "tools", LogX: true, LogY: true, YLabel: "latency, ms",
			Metrics: []Metric{list, list99}, Notes: []string{listNote}},
		{ID: "search-tools", Title: "legate.search_tools against cached tools", Work: "tools", LogX: true, LogY: true, YLabel: "latency, ms",
			Metrics: []Metric{gw, inproc, inprocCPU}, Notes: []string{searchNote}},
	}, nil
}

// throughGateway fills a cache of n tools, starts `legate serve` on it
// and returns tools/list's p50 and p99 and legate.search_tools's p50, in
// milliseconds.
func throughGateway(ctx context.Context, o Options, n int) ([2]float64, float64, error) {
	ups := n / toolsPerUpstream
	name := fmt.Sprintf("tools-%d", n)
	up, err := harness.StartSelf(ctx, o.Dir, name+"-upstreams", "upstream", "-servers", fmt.Sprint(ups), "-tools", fmt.Sprint(toolsPerUpstream))
	if err != nil {
		return [2]float64{}, 0, err
	}
	defer up.Stop()
	var sb strings.Builder
	sb.WriteString("upstreams:\n")
	for i := range ups {
		fmt.Fprintf(&sb, "  - {id: u%d, url: \"http://%s/u%d\"}\n", i, up.Addr, i)
	}
	cfg, err := harness.WriteFile(o.Dir, name+".yaml", sb.String())
	if err != nil {
		return [2]float64{}, 0, err
	}
	state := filepath.Join(o.Dir, name+"-state")
	t0 := time.Now()
	cmd := exec.CommandContext(ctx, o.Legate, "upstream", "refresh", "--config", cfg, "--state-dir", state)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if out, err := cmd.CombinedOutput(); err != nil {
		return [2]float64{}, 0, fmt.Errorf("legate upstream refresh: %v\n%s", err, out)
	}
	o.Logf("curves: cache of %d tools filled in %s", n, time.Since(t0).Round(time.Millisecond))
	lg, err := harness.StartLegate(ctx, o.Dir, name+"-legate", o.Legate, cfg, state)
	if err != nil {
		return [2]float64{}, 0, err
	}
	defer lg.Stop()
	if err := harness.WaitQuiet(up, 500*time.Millisecond, 2*time.Minute); err != nil {
		return [2]float64{}, 0, err
	}
	if _, _, err := harness.WaitIdle(lg, 500*time.Millisecond, 5*time.Minute); err != nil {
		return [2]float64{}, 0, err
	}
	hc := harness.NewHTTPClient()
	rs, err := harness.OpenRaw(ctx, hc, "http://"+lg.Addr+"/mcp")
	if err != nil {
		return [2]float64{}, 0, err
	}
	for range 3 { // warm-up: the first lists fill the caches of the encoding
		if _, _, err := rs.ListRaw(ctx); err != nil {
			return [2]float64{}, 0, err
		}
	}
	var lists []time.Duration
	for deadline := time.Now().Add(o.Window); len(lists) < 5 || (time.Now().Before(deadline) && len(lists) < 500); {
		d, names, err := rs.ListRaw(ctx)
		if err != nil {
			return [2]float64{}, 0, err
		}
		if got := countPrefix(names, "mcp__"); got != n {
			return [2]float64{}, 0, fmt.Errorf("tools/list held %d upstream tools, want %d", got, n)
		}
		lists = append(lists, d)
	}
	slices.Sort(lists)
	ss, err := harness.OpenSessions(ctx, hc, "http://"+lg.Addr+"/mcp", 1, 1, false)
	if err != nil {
		return [2]float64{}, 0, err
	}
	defer harness.CloseSessions(ss)
	searches, err := timeCalls(ctx, ss[0], "legate__search_tools", map[string]any{"query": searchQuery, "limit": 5}, o.Window, 20, 2000)
	if err != nil {
		return [2]float64{}, 0, err
	}
	return [2]float64{ms(harness.Percentile(lists, .5)), ms(harness.Percentile(lists, .99))}, ms(harness.Percentile(searches, .5)), nil
}

// timeCalls calls tool on s for window (at least least, at most most
// times), after a tenth of that as warm-up, and returns the sorted
// latencies.
func timeCalls(ctx context.Context, s *mcp.ClientSession, tool string, args map[string]any, window time.Duration, least, most int) ([]time.Duration, error) {
	call := harness.ToolCall(tool, args)
	for range max(least/10, 1) {
		if err := call(ctx, s); err != nil {
			return nil, err
		}
	}
	var out []time.Duration
	for deadline := time.Now().Add(window); len(out) < least || (time.Now().Before(deadline) && len(out) < most); {
		t0 := time.Now()
		if err := call(ctx, s); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	slices.Sort(out)
	return out, nil
}

func countPrefix(names []string, prefix string) int {
	n := 0
	for _, name := range names {
		if strings.HasPrefix(name, prefix) {
			n++
		}
	}
	return n
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
