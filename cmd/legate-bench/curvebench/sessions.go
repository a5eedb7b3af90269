package curvebench

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/cmd/legate-bench/harness"
)

// sessionCurve measures `legate serve`'s RSS against idle sessions, as
// P4 does (go-sdk clients, no standalone SSE stream), opening them in
// steps a decade apart and reading the RSS after each step has settled.
func sessionCurve(ctx context.Context, o Options) ([]Curve, error) {
	steps := pick(o, []int{10, 100}, []int{100, 1000, 10000})
	settle := pick(o, 200*time.Millisecond, 2*time.Second)
	up, err := harness.StartSelf(ctx, o.Dir, "sessions-upstream", "upstream", "-servers", "1", "-tools", "1")
	if err != nil {
		return nil, err
	}
	defer up.Stop()
	cfg, err := harness.WriteFile(o.Dir, "sessions.yaml", fmt.Sprintf("upstreams:\n  - {id: up, url: \"http://%s/mcp\"}\n", up.Addr))
	if err != nil {
		return nil, err
	}
	lg, err := harness.StartLegate(ctx, o.Dir, "sessions-legate", o.Legate, cfg, filepath.Join(o.Dir, "sessions-state"))
	if err != nil {
		return nil, err
	}
	defer lg.Stop()
	if err := harness.WaitQuiet(up, 300*time.Millisecond, 10*time.Second); err != nil {
		return nil, err
	}
	time.Sleep(settle)
	rss0, err := harness.RSSBytes(lg.Pid())
	if err != nil {
		return nil, err
	}
	total := Metric{Name: "RSS", Unit: "MiB"}
	above := Metric{Name: "RSS above the process's before any session", Unit: "MiB", Expect: Linear}
	per := Metric{Name: "RSS growth per idle session", Unit: "KiB", Expect: Constant}
	hc := harness.NewHTTPClient()
	var open []*mcp.ClientSession
	defer func() { harness.CloseSessions(open) }()
	for _, n := range steps {
		more, err := harness.OpenSessions(ctx, hc, "http://"+lg.Addr+"/mcp", n-len(open), 8, false)
		if err != nil {
			return nil, err
		}
		open = append(open, more...)
		time.Sleep(settle)
		rss, err := harness.RSSBytes(lg.Pid())
		if err != nil {
			return nil, err
		}
		x := float64(n)
		total.Points = append(total.Points, Point{x, float64(rss) / (1 << 20)})
		above.Points = append(above.Points, Point{x, float64(rss-rss0) / (1 << 20)})
		per.Points = append(per.Points, Point{x, float64(rss-rss0) / 1024 / x})
		o.Logf("curves: %d idle sessions: RSS %.1f MiB, %.1f KiB per session", n, float64(rss)/(1<<20), float64(rss-rss0)/1024/x)
	}
	return []Curve{{ID: "sessions-rss", Title: "RSS against idle sessions", Work: "sessions", LogX: true, LogY: true, YLabel: "MiB; KiB per session",
		Metrics: []Metric{total, above, per},
		Notes: []string{fmt.Sprintf("`legate serve` with one upstream, %.1f MiB RSS before any session; go-sdk client sessions (protocol 2025-11-25, "+
			"no standalone SSE stream), opened in steps and kept open; RSS (VmRSS) read %s after each step. Per session: the growth over "+
			"the RSS before any session, divided by the sessions open.", float64(rss0)/(1<<20), settle)}}}, nil
}
