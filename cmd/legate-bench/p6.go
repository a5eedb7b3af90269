package main

import (
	"context"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
	"github.com/legate-mcp/legate/cmd/legate-bench/sqlbench"
)

// p6 is P6, postgres.query through Legate against pgx directly (sqlbench).
func (b *bench) p6(ctx context.Context) ([]row, error) {
	rs, err := sqlbench.Run(ctx, benchkit.Options{Legate: b.bin, Dir: b.dir, Rounds: b.rounds, Warmup: b.warmup,
		Window: b.dur, C: b.cs, Logf: b.logf})
	out := make([]row, len(rs))
	for i, r := range rs {
		out[i] = row(r)
	}
	return out, err
}
