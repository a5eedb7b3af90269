package main

import (
	"context"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
	"github.com/legate-mcp/legate/cmd/legate-bench/scalebench"
)

// p8 is P8, two replicas on one PostgreSQL store (scalebench).
func (b *bench) p8(ctx context.Context) ([]row, error) {
	rs, err := scalebench.P8(ctx, benchkit.Options{Legate: b.bin, Dir: b.dir, Rounds: b.rounds, Warmup: b.warmup,
		Window: b.dur, C: b.cs, Logf: b.logf}, b.smoke)
	out := make([]row, len(rs))
	for i, r := range rs {
		out[i] = row(r)
	}
	return out, err
}
