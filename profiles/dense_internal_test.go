package profiles

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors/embeddings"
)

// BenchmarkSearch10k is legate.search_tools over 10,000 tools by BM25
// alone and fused with 768-dimension embeddings (every tool embedded, the
// request's embedding among the last asked): what the dense half adds to
// a search, without the endpoint's time.
func BenchmarkSearch10k(b *testing.B) {
	const n, dims = 10000, 768
	r := rand.New(rand.NewPCG(1, 2))
	vector := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return embeddings.Normalize(v)
	}
	entries := make([]*catalog.Entry, n)
	d := DenseFor(config.Search{EmbeddingsURL: "http://127.0.0.1:1/v1/embeddings", EmbeddingsModel: "m"}, nil, nil, nil)
	for i := range entries {
		name := fmt.Sprintf("up%d.tool_%d", i/50, i%50)
		entries[i] = &catalog.Entry{Canonical: "mcp." + name, Hash: fmt.Sprint(i), Tool: &mcp.Tool{Name: name,
			Description: fmt.Sprintf("Read, list or update record %d of service %d and report its status", i%50, i/50),
			InputSchema: json.RawMessage(`{"type":"object"}`)}}
		d.vecs[entries[i].Hash] = vector()
	}
	view, err := catalog.Build(catalog.Canonical, entries)
	if err != nil {
		b.Fatal(err)
	}
	view.Index()
	const query = "update the status of record 7"
	d.queries.Add(query, vector())
	in := &SearchArgs{Query: query}
	for _, c := range []struct {
		name  string
		dense *Dense
	}{{"bm25", nil}, {"fused", d}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				found, ranking, why, err := searchView(b.Context(), view, in, c.dense)
				if err != nil || len(found) != defaultSearchLimit || why != "" || c.dense != nil && ranking != RankingFused {
					b.Fatalf("%d found, ranking %s (%s), %v", len(found), ranking, why, err)
				}
			}
		})
	}
}
