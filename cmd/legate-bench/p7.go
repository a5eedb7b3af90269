package main

import (
	"context"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
	"github.com/legate-mcp/legate/cmd/legate-bench/saasbench"
)

// p7 is P7, a read through each SaaS connector against its library
// calling the same stand-in directly (saasbench).
func (b *bench) p7(ctx context.Context) ([]row, error) { return b.saas(ctx, saasbench.Run) }

// p7b is P7b, the same reads against the MCP servers people install
// instead (saasbench.RunAnchors).
func (b *bench) p7b(ctx context.Context) ([]row, error) { return b.saas(ctx, saasbench.RunAnchors) }

func (b *bench) saas(ctx context.Context, run func(context.Context, benchkit.Options) ([]benchkit.Row, error)) ([]row, error) {
	rs, err := run(ctx, benchkit.Options{Legate: b.bin, Dir: b.dir, Rounds: b.rounds, Warmup: b.warmup,
		Window: b.dur, C: b.cs, Logf: b.logf})
	out := make([]row, len(rs))
	for i, r := range rs {
		out[i] = row(r)
	}
	return out, err
}
