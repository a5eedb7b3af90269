package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/legate-mcp/legate/cmd/legate-bench/sqlbench"
)

// p6 is scale-out (package sqlbench): two replicas on one PostgreSQL store.
func (b *bench) p6(ctx context.Context) ([]row, error) {
	db, drop, err := sqlbench.Database(ctx, sqlbench.ServerURL())
	if err != nil {
		return nil, err
	}
	defer drop()
	up, err := startSelf(ctx, b.dir, "p6-upstream", "upstream", "-servers", "1", "-tools", "1")
	if err != nil {
		return nil, err
	}
	defer up.stop()
	cfg, err := b.writeFile("p6.yaml", fmt.Sprintf("approvals: {wait: 30s}\nupstreams:\n  - {id: up, url: \"http://%[1]s/mcp\"}\n  - {id: held, url: \"http://%[1]s/mcp\"}\n"+
		"policy:\n  rules:\n    - {upstream: up, action: allow}\n    - {upstream: held, action: approve}\n", up.addr))
	if err != nil {
		return nil, err
	}
	run := sqlbench.Run{Tool: "mcp__up__echo", Held: "mcp__held__echo", Token: "bench-admin-token", Rounds: b.rounds, Warmup: b.warmup, Dur: b.dur,
		Wakes: map[bool]int{false: 20, true: 3}[b.smoke], Log: b.logf}
	os.Setenv("LEGATE_ADMIN_TOKEN", run.Token) // the replicas' admin API
	for i := range run.Replicas {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		p, err := startProc(ctx, b.dir, fmt.Sprint("p6-replica-", i), addr, b.bin, "serve", "--config", cfg, "--store", db,
			"--state-dir", filepath.Join(b.dir, fmt.Sprint("p6-state-", i)), "--listen", addr)
		if err != nil {
			return nil, err
		}
		defer p.stop()
		if err := waitReady(ctx, p, "http://"+addr+"/readyz"); err != nil {
			return nil, err
		}
		run.Replicas[i] = "http://" + addr
	}
	c := map[bool]int{false: 8, true: 2}[b.smoke]
	if run.One, err = sqlbench.Connect(ctx, run.Replicas[0]+"/mcp", c); err != nil {
		return nil, err
	}
	defer sqlbench.Close(run.One)
	other, err := sqlbench.Connect(ctx, run.Replicas[1]+"/mcp", c/2)
	if err != nil {
		return nil, err
	}
	defer sqlbench.Close(other)
	if err := waitTools(ctx, run.One[0], run.Held, 1); err != nil {
		return nil, err
	}
	run.Spread = append(run.One[:c/2:c/2], other...)
	res, err := run.Measure(ctx)
	if err != nil {
		return nil, err
	}
	same, cross := sqlbench.Ms(sqlbench.Percentile(res.Same, 0.5)), sqlbench.Ms(sqlbench.Percentile(res.Cross, 0.5))
	return []row{
		{Scenario: "P6", Metric: fmt.Sprintf("stateless calls/s, C=%d: one replica vs two on one store", c), Unit: "calls/s",
			Baseline: median(res.RateOne), Legate: median(res.RateTwo), Ratio: median(ratios(res.RateTwo, res.RateOne))},
		{Scenario: "P6", Metric: "approval decided → waiting call returns, p50: same replica vs another", Unit: "ms",
			Baseline: same, Legate: cross, Ratio: cross / same, Target: "≤ 50 ms", Result: passFail(cross <= 50)},
	}, nil
}
