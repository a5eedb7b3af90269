package embeddings_test

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/legate-mcp/legate/connectors/embeddings"
)

// Rank's heap gives what sorting every score gives: the best first, the
// lower number first on a tie, items without a vector left out.
func TestRankIsTheSortedScores(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		n, dims, limit := r.IntN(300), 1+r.IntN(20), r.IntN(60)
		vs := make([][]float32, n)
		for i := range vs {
			if r.IntN(10) == 0 {
				continue // left out
			}
			if r.IntN(5) == 0 && i > 0 && vs[i-1] != nil {
				vs[i] = vs[i-1] // a tie
				continue
			}
			v := make([]float32, dims)
			for j := range v {
				v[j] = float32(r.NormFloat64())
			}
			vs[i] = embeddings.Normalize(v)
		}
		q := make([]float32, dims)
		for j := range q {
			q[j] = float32(r.NormFloat64())
		}
		got := embeddings.Rank(q, n, func(i int) []float32 { return vs[i] }, limit)
		var all []embeddings.Scored
		for i, v := range vs {
			if v != nil {
				all = append(all, embeddings.Scored{N: i, Score: embeddings.Dot(q, v)})
			}
		}
		slices.SortFunc(all, func(a, b embeddings.Scored) int {
			if c := cmp.Compare(b.Score, a.Score); c != 0 {
				return c
			}
			return a.N - b.N
		})
		var want []int
		for _, s := range all[:min(limit, len(all))] {
			want = append(want, s.N)
		}
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("round %d (n %d, limit %d): Rank %v, sorted %v", round, n, limit, got, want)
		}
	}
}

// Dot's eight lanes sum what one loop in float64 sums, to float32's
// precision.
func TestDot(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, dims := range []int{1, 7, 8, 9, 768, 1536} {
		a, b := make([]float32, dims), make([]float32, dims)
		var want float64
		for i := range a {
			a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			want += float64(a[i]) * float64(b[i])
		}
		if got := embeddings.Dot(a, b); math.Abs(got-want) > 1e-4*math.Max(1, math.Abs(want)) {
			t.Errorf("%d dimensions: %v, want %v", dims, got, want)
		}
	}
	if embeddings.Dot([]float32{1}, []float32{1, 2}) != 0 {
		t.Error("vectors of different lengths do not give 0")
	}
}
