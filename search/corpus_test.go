package search_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/connectors"
	_ "github.com/legate-mcp/legate/connectors/all"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/search"
)

var update = flag.Bool("update", false, "rewrite testdata/tools/legate-*.json from the registered connector types")

// toolFile is one file of testdata/tools: the tools one server lists.
type toolFile struct {
	// Server is the id the tools are named under: upstream tools are
	// mcp.<server>.<tool>, a native type's <server>.<tool>.
	Server string `json:"server"`
	// Package is where the tools come from: an npm package and version,
	// or "legate" for a native connector type.
	Package string      `json:"package"`
	Native  bool        `json:"native,omitempty"`
	Tools   []*mcp.Tool `json:"tools"`
}

// corpusTool is one tool of the corpus under its canonical name.
type corpusTool struct {
	canonical, server string
	tool              *mcp.Tool
}

// loadCorpus reads every tool of testdata/tools, sorted by file name.
func loadCorpus(t testing.TB) []corpusTool {
	files, err := filepath.Glob(filepath.Join("testdata", "tools", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no tool lists in testdata/tools (%v): run scripts/collect-tools.sh", err)
	}
	var out []corpusTool
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tf toolFile
		if err := json.Unmarshal(b, &tf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		prefix := "mcp." + tf.Server + "."
		if tf.Native {
			prefix = tf.Server + "."
		}
		for _, tool := range tf.Tools {
			out = append(out, corpusTool{canonical: prefix + tool.Name, server: tf.Server, tool: tool})
		}
	}
	return out
}

// corpusIndex indexes the corpus as the gateway would.
func corpusIndex(tools []corpusTool) *search.Index {
	docs := make([]search.Doc, len(tools))
	for i, ct := range tools {
		docs[i] = search.FromTool(ct.canonical, ct.server, ct.tool)
	}
	return search.New(docs)
}

// TestNativeToolLists: testdata/tools holds the tools of every native
// connector type, built from its sample.yaml; -update rewrites them.
func TestNativeToolLists(t *testing.T) {
	connectortest.Samples(t, filepath.Join("..", "connectors"), func(ct connectors.Type, c connectors.Connector) {
		tf := toolFile{Server: ct.Name, Package: "legate", Native: true}
		for _, tool := range c.Tools() {
			tf.Tools = append(tf.Tools, &mcp.Tool{Name: tool.Name, Description: tool.Description, InputSchema: tool.InputSchema})
		}
		want, _ := json.MarshalIndent(tf, "", "  ")
		want = append(want, '\n')
		path := filepath.Join("testdata", "tools", "legate-"+ct.Name+".json")
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s is stale: go test ./search -run TestNativeToolLists -update", path)
		}
	})
}

// query is one need as a person words it, and the tools that meet it.
type query struct {
	Query string   `json:"query"`
	Want  []string `json:"want"`
	// Set is "tune" or "dev" (looked at while tuning the ranking; dev
	// written after a first round of tuning on tune) or "holdout" (never
	// looked at: it measures how the tuning generalizes); "dev-b" and
	// "holdout-b" were written blind, by people who never saw the
	// ranking, its code or the other requests, and never tried one
	// (dev-b is tuned on, holdout-b never looked into); "holdout-c" was
	// written the same way for the next round of ranking work, from the
	// tool definitions alone, and measured before any change, as were
	// "holdout-d", "holdout-e", "holdout-f" and "holdout-g" for the rounds
	// after; "dev-c" to "dev-k" were written blind beside "holdout-f" to
	// "holdout-n", to be tuned on ("holdout-n" measured the sixteenth
	// round's ranking).
	Set string `json:"set"`
}

// loadQueries reads testdata/queries.json.
func loadQueries(t testing.TB) []query {
	b, err := os.ReadFile(filepath.Join("testdata", "queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	var qs []query
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	return qs
}

// minTop5 are the fewest queries of each set whose tool must be in the
// first five hits, as search/README.md reports them after the seventeenth
// round on the corpus of 321 tools: a change that ranks worse fails.
var minTop5 = map[string]int{"tune": 59, "dev": 69, "dev-b": 115, "dev-c": 137, "dev-d": 130, "dev-e": 136, "dev-f": 137, "dev-g": 133, "dev-h": 137, "dev-i": 143, "dev-j": 140, "dev-k": 136,
	"holdout": 110, "holdout-b": 92, "holdout-c": 134, "holdout-d": 131, "holdout-e": 133, "holdout-f": 128, "holdout-g": 124, "holdout-h": 138, "holdout-i": 129, "holdout-j": 136, "holdout-k": 125, "holdout-l": 136, "holdout-m": 134, "holdout-n": 138}

// reads counts how often each blind set's figures have been read (the
// seventeenth round's readings included): a set read often measures the ranking
// less blindly each time. The tuned sets are read at will; holdout, the
// authors' own, after every round.
var reads = map[string]int{"holdout-b": 21, "holdout-c": 17, "holdout-d": 16, "holdout-e": 14, "holdout-f": 13, "holdout-g": 12, "holdout-h": 11, "holdout-i": 9, "holdout-j": 8, "holdout-k": 7, "holdout-l": 6, "holdout-m": 4, "holdout-n": 2}

// TestQualityTop5 ranks the corpus for every query of
// testdata/queries.json and counts the queries one of whose tools is in
// the first five hits. It logs too, finer-grained, how many have one
// first and the mean reciprocal rank of the first right hit (0 past the
// tenth). -v prints the misses of the tune and dev sets.
func TestQualityTop5(t *testing.T) {
	tools := loadCorpus(t)
	ix := corpusIndex(tools)
	known := map[string]bool{}
	for _, ct := range tools {
		known[ct.canonical] = true
	}
	qs := loadQueries(t)
	hit, first, total := map[string]int{}, map[string]int{}, map[string]int{}
	rr := map[string]float64{}
	for _, q := range qs {
		for _, w := range q.Want {
			if !known[w] {
				t.Errorf("query %q wants %s, which the corpus does not hold", q.Query, w)
			}
		}
		total[q.Set]++
		var got []string
		rank := -1 // of the first right hit
		for i, h := range ix.Search(q.Query, search.Options{Limit: 10}) {
			if i < 5 {
				got = append(got, tools[h.Doc].canonical)
			}
			if rank < 0 && slices.Contains(q.Want, tools[h.Doc].canonical) {
				rank = i
			}
		}
		if rank >= 0 {
			rr[q.Set] += 1 / float64(rank+1)
		}
		if rank == 0 {
			first[q.Set]++
		}
		if rank >= 0 && rank < 5 {
			hit[q.Set]++
		} else if !strings.HasPrefix(q.Set, "holdout") && testing.Verbose() {
			t.Logf("miss %q: want %v, got %s", q.Query, q.Want, strings.Join(got, " "))
		}
	}
	for _, set := range []string{"tune", "dev", "dev-b", "dev-c", "dev-d", "holdout", "holdout-b", "holdout-c", "holdout-d", "holdout-e", "holdout-f", "holdout-g", "dev-e", "holdout-h", "dev-f", "holdout-i", "dev-g", "holdout-j", "dev-h", "holdout-k", "dev-i", "holdout-l", "dev-j", "holdout-m", "holdout-n", "dev-k"} {
		if total[set] == 0 {
			t.Errorf("no %s queries", set)
			continue
		}
		pct := 100 * float64(hit[set]) / float64(total[set])
		read := ""
		if n := reads[set]; n > 0 {
			read = fmt.Sprintf("; read %d times", n)
		}
		t.Logf("%s: top-5 %d/%d = %.1f%% over %d tools (top-1 %d, MRR@10 %.3f%s)", set, hit[set], total[set], pct, len(tools),
			first[set], rr[set]/float64(total[set]), read)
		if hit[set] < minTop5[set] {
			t.Errorf("%s: top-5 for %d queries, fewer than %d", set, hit[set], minTop5[set])
		}
	}
}
