package search_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/connectors/embeddings"
	"github.com/legate-mcp/legate/search"
)

// TestFusedRankingQuality measures, on the tuned sets only, what the
// tool search's dense half (search: embeddings_url) does to the first
// five hits: BM25F alone, the cosine of the embeddings alone, and the two
// fused by reciprocal rank as legate.search_tools fuses them (the first 50
// of each; profiles.Dense). It runs against the endpoint named by
// LEGATE_SEARCH_EMBEDDINGS_URL (its …/embeddings URL; for an offline
// model, scripts/embeddings/server.mjs), with the model
// LEGATE_SEARCH_EMBEDDINGS_MODEL, logs the figures, and fails for a set
// the fused ranking ranks worse than BM25F alone: a model that does not
// help the search. It never reads a held-out set, so that a model can be
// tried as often as needed.
func TestFusedRankingQuality(t *testing.T) {
	url := os.Getenv("LEGATE_SEARCH_EMBEDDINGS_URL")
	if url == "" {
		t.Skip("LEGATE_SEARCH_EMBEDDINGS_URL is not set: no endpoint to measure the fused ranking with (search/README.md)")
	}
	const candidates, batch = 50, 32
	tools := loadCorpus(t)
	ix := corpusIndex(tools)
	client := embeddings.New(embeddings.Options{URL: url, Model: os.Getenv("LEGATE_SEARCH_EMBEDDINGS_MODEL"), Name: "search", Timeout: time.Minute})
	embed := func(texts []string) [][]float32 {
		var out [][]float32
		for i := 0; i < len(texts); i += batch {
			vs, err := client.Embed(context.Background(), "", texts[i:min(i+batch, len(texts))])
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, vs...)
		}
		return out
	}
	texts := make([]string, len(tools))
	for i, ct := range tools { // what profiles.Dense embeds of a tool
		texts[i] = strings.ReplaceAll(ct.canonical[strings.LastIndexByte(ct.canonical, '.')+1:], "_", " ")
		if ct.tool.Title != "" {
			texts[i] += "\n" + ct.tool.Title
		}
		texts[i] += "\n" + ct.tool.Description
	}
	vecs := embed(texts)
	all := loadQueries(t)
	var tuned []string // every set but the held-out ones, in their order
	var qs []query
	var qtexts []string
	for _, q := range all {
		if strings.HasPrefix(q.Set, "holdout") {
			continue
		}
		if !slices.Contains(tuned, q.Set) {
			tuned = append(tuned, q.Set)
		}
		qs, qtexts = append(qs, q), append(qtexts, q.Query)
	}
	qvecs := embed(qtexts)
	type counts struct{ bm25, dense, fused, total int }
	by := map[string]*counts{}
	for i, q := range qs {
		in5 := func(docs []int) int {
			for _, d := range docs[:min(5, len(docs))] {
				if slices.Contains(q.Want, tools[d].canonical) {
					return 1
				}
			}
			return 0
		}
		var bm []int
		for _, h := range ix.Search(q.Query, search.Options{Limit: candidates}) {
			bm = append(bm, h.Doc)
		}
		dense := embeddings.Rank(qvecs[i], len(vecs), func(j int) []float32 { return vecs[j] }, candidates)
		var fused []int
		for _, s := range embeddings.Fuse(bm, dense) {
			fused = append(fused, s.N)
		}
		c := by[q.Set]
		if c == nil {
			c = &counts{}
			by[q.Set] = c
		}
		c.bm25, c.dense, c.fused, c.total = c.bm25+in5(bm), c.dense+in5(dense), c.fused+in5(fused), c.total+1
	}
	for _, set := range tuned {
		c := by[set]
		t.Logf("%s: top-5 of %d: BM25F %d, embeddings %d, fused %d", set, c.total, c.bm25, c.dense, c.fused)
		if c.fused < c.bm25 {
			t.Errorf("%s: the fused ranking has %d in the first five, BM25F alone %d: with this model, leave search.embeddings_url unset", set, c.fused, c.bm25)
		}
	}
}
