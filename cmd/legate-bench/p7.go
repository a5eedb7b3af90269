package main

import (
	"context"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
	"github.com/legate-mcp/legate/cmd/legate-bench/saasbench"
)

// p7 is P7, a read through each SaaS connector against its library
// calling the same stand-in directly (saasbench).
func (b *bench) p7(ctx context.Context) ([]row, error) {
	rs, err := saasbench.Run(ctx, benchkit.Options{Legate: b.bin, Dir: b.dir, Rounds: b.rounds, Warmup: b.warmup,
		Window: b.dur, C: b.cs, Logf: b.logf})
	out := make([]row, len(rs))
	for i, r := range rs {
		out[i] = row(r)
	}
	return out, err
}
