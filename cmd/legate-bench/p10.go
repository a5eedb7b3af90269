package main

import (
	"context"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
	"github.com/legate-mcp/legate/cmd/legate-bench/gatewaybench"
)

// p10 is P10, Legate beside other MCP gateways on P1's upstream and load
// (gatewaybench).
func (b *bench) p10(ctx context.Context) ([]row, error) {
	rs, err := gatewaybench.Run(ctx, benchkit.Options{Legate: b.bin, Dir: b.dir, Rounds: b.rounds, Warmup: b.warmup,
		Window: b.dur, C: b.cs, Logf: b.logf})
	out := make([]row, len(rs))
	for i, r := range rs {
		out[i] = row(r)
	}
	return out, err
}
