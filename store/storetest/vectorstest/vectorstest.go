// Package vectorstest is the part of the store suite (package storetest)
// that an EmbeddingStore passes: vectors kept and read by key, across
// statements' chunks, replaced, noted used when read, and pruned.
package vectorstest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/storetest/internal/suite"
)

// base and must are the suite's clock and check (package suite).
var (
	base = suite.Base
	must = suite.Must
)

// Run runs the suite against es, empty.
func Run(t *testing.T, es store.EmbeddingStore) {
	ctx := context.Background()
	// More keys than one statement names, to cross its chunks.
	vs := map[string][]float32{}
	var keys []string
	for i := range 1200 {
		k := fmt.Sprintf("k%04d", i)
		vs[k], keys = []float32{float32(i), -0.5, 1e-3}, append(keys, k)
	}
	must(t, es.Put(ctx, vs, base))
	got, err := es.Get(ctx, append(slices.Clone(keys), "unknown"), base.Add(time.Hour))
	must(t, err)
	if len(got) != len(vs) || !slices.Equal(got["k1199"], []float32{1199, -0.5, 1e-3}) {
		t.Fatalf("get: %d vectors (want %d), k1199 %v", len(got), len(vs), got["k1199"])
	}
	// Put replaces; Get notes a key used, and Prune keeps what was used
	// since its time.
	must(t, es.Put(ctx, map[string][]float32{"k0000": {9}}, base))
	if got, _ := es.Get(ctx, []string{"k0000"}, base.Add(2*time.Hour)); !slices.Equal(got["k0000"], []float32{9}) {
		t.Fatalf("after a second put: %v", got["k0000"])
	}
	n, err := es.Prune(ctx, base.Add(90*time.Minute))
	must(t, err)
	if n != int64(len(vs)-1) {
		t.Fatalf("pruned %d, want %d: every key but the one read after", n, len(vs)-1)
	}
	if got, _ := es.Get(ctx, keys, base.Add(3*time.Hour)); len(got) != 1 || got["k0000"] == nil {
		t.Fatalf("after the prune: %d vectors", len(got))
	}
}
