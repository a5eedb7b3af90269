package main

import (
	"context"

	"github.com/legate-mcp/legate/cmd/legate-bench/benchkit"
	"github.com/legate-mcp/legate/cmd/legate-bench/searchbench"
)

// p9 is P9, legate.search_tools over 10,000 tools (searchbench).
func (b *bench) p9(ctx context.Context) ([]row, error) {
	rs, err := searchbench.Run(ctx, benchkit.Options{Window: b.dur, Logf: b.logf})
	out := make([]row, len(rs))
	for i, r := range rs {
		out[i] = row(r)
	}
	return out, err
}
