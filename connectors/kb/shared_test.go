package kb_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/embeddings/embeddingstest"
	"github.com/legate-mcp/legate/connectors/kb"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/store"
	_ "github.com/legate-mcp/legate/store/postgres"
	"github.com/legate-mcp/legate/store/postgres/pgtest"
	_ "github.com/legate-mcp/legate/store/sqlite"
)

// TestMain runs the tests through pgtest, which drops the database the
// PostgreSQL ones use.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// openStores opens n stores on one database, as n replicas would, closed
// at the test's end.
func openStores(t testing.TB, url string, n int) []store.Store {
	t.Helper()
	var out []store.Store
	for range n {
		st, err := store.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		out = append(out, st)
	}
	return out
}

// replica builds the instance "kb" of config on st, as one replica of a
// deployment builds it, looking at the store on every call.
func replica(t testing.TB, st store.Store, config string) connectors.Connector {
	t.Helper()
	ct, _ := connectors.Lookup("kb")
	c, err := connectors.BuildIn(ct, connectors.Instance{ID: "kb", Index: sources.IndexStore(st.KB(), "kb")}, yamlNode(t, config), "c")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.(connectors.Closer).Close() })
	kb.CheckStoreEachCall(c)
	return c
}

// stores are the URLs of an empty store of each backend, for a test.
var stores = map[string]func(t testing.TB) string{
	"sqlite":   func(t testing.TB) string { return "sqlite://" + filepath.Join(t.TempDir(), "legate.db") },
	"postgres": func(t testing.TB) string { return pgtest.URL(t) },
}

// TestReplicasShareTheIndex: of two replicas on one store, one cannot
// read the folder (it was missing when that replica built its index),
// the other can; the first answers from what the second wrote to the
// store, a document added, changed and removed included, and reads by
// the second's refs.
func TestReplicasShareTheIndex(t *testing.T) {
	for name, url := range stores {
		t.Run(name, func(t *testing.T) {
			sts := openStores(t, url(t), 2)
			dir := filepath.Join(t.TempDir(), "handbook")
			config := folderConfig(dir)
			blind := replica(t, sts[0], config)
			r := search(t, blind, alice, "how long are database backups kept", 5)
			if len(r.Passages) != 0 || len(r.Problems) != 1 || !strings.Contains(r.Problems[0].Problem, "cannot be read") {
				t.Fatalf("before the folder exists: %+v", r)
			}
			copyTree(t, corpus(t), dir)
			seeing := replica(t, sts[1], config)
			want := search(t, seeing, alice, "how long are database backups kept", 5)
			if len(want.Passages) == 0 || want.Documents != 9 {
				t.Fatalf("the replica that reads the folder: %+v", want)
			}
			got := search(t, blind, alice, "how long are database backups kept", 5)
			if got.Documents != want.Documents || got.Indexed != want.Indexed || len(got.Passages) != len(want.Passages) {
				t.Fatalf("the replica that cannot read the folder: %d documents, %d passages; want %d, %d", got.Documents, got.Indexed, want.Documents, want.Indexed)
			}
			for i := range want.Passages {
				if got.Passages[i].Source != want.Passages[i].Source || got.Passages[i].Text != want.Passages[i].Text || got.Passages[i].Score != want.Passages[i].Score {
					t.Errorf("passage %d: %s %.4f, want %s %.4f: the replicas rank alike", i, got.Passages[i].Source, got.Passages[i].Score, want.Passages[i].Source, want.Passages[i].Score)
				}
			}
			if doc, err := read(t, blind, alice, map[string]any{"ref": want.Passages[0].Document}); err != nil || doc.TotalChars == 0 {
				t.Errorf("the other replica's document ref: %v", err)
			}

			// Added, then changed, then removed: seen by the replica that
			// reads the folder, answered by the other.
			p := filepath.Join(dir, "airships.md")
			if err := os.WriteFile(p, []byte("# Airships\n\n## Mooring\n\nThe zeppelin is moored at hangar 7.\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			waitFor(t, seeing, "zeppelin hangar mooring", hasSource(p))
			if r := search(t, blind, alice, "zeppelin hangar mooring", 5); !hasSource(p)(r) {
				t.Fatalf("the added document, on the other replica: %+v", r.Passages)
			}
			if err := os.WriteFile(p, []byte("# Airships\n\n## Mooring\n\nThe zeppelin is moored at hangar 9 since the storm.\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			changed := func(r kb.SearchResult) bool {
				return hasSource(p)(r) && strings.Contains(r.Passages[0].Text, "hangar 9")
			}
			w := waitFor(t, seeing, "zeppelin storm", changed)
			r = search(t, blind, alice, "zeppelin storm", 5)
			if !changed(r) {
				t.Fatalf("the changed document, on the other replica: %+v", r.Passages)
			}
			if got, err := read(t, blind, alice, map[string]any{"ref": w.Passages[0].Ref}); err != nil || !strings.Contains(got.Text, "hangar 9") {
				t.Errorf("the other replica's passage ref: %v %q", err, got.Text)
			}
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			waitFor(t, seeing, "zeppelin hangar storm", not(hasSource(p)))
			if r := search(t, blind, alice, "zeppelin hangar storm", 5); hasSource(p)(r) {
				t.Errorf("the removed document, on the other replica: %+v", r.Passages)
			}
		})
	}
}

// TestStoredEmbeddingsAreNotAskedAgain: passages embedded once are kept
// in the store with their vectors: a document written again unchanged is
// not rewritten, a replica built on the store embeds its queries alone,
// and a document of which one passage changed has that passage alone
// embedded again, by whichever replica searches first.
func TestStoredEmbeddingsAreNotAskedAgain(t *testing.T) {
	ctx := context.Background()
	sts := openStores(t, "sqlite://"+filepath.Join(t.TempDir(), "legate.db"), 2)
	dir := t.TempDir()
	copyTree(t, corpus(t), dir)
	p := filepath.Join(dir, "airships.md")
	airships := "# Airships\n\n## Mooring\n\nThe zeppelin is moored at hangar 7.\n\n## Crew\n\nA crew of twelve flies the zeppelin.\n\n## Fuel\n\nThe zeppelin burns hydrogen.\n"
	if err := os.WriteFile(p, []byte(airships), 0o644); err != nil {
		t.Fatal(err)
	}
	e := embeddingstest.New(t, "")
	config := embeddingsConfig(dir, e, 64)
	first := replica(t, sts[0], config)
	r := search(t, first, alice, "who flies the zeppelin", 5)
	if r.Ranking != "bm25+embeddings" {
		t.Fatalf("ranking %s (%s)", r.Ranking, r.DenseError)
	}
	_, inputs := e.Counts()
	if inputs != r.Indexed+1 {
		t.Fatalf("%d inputs embedded for %d passages and a query", inputs, r.Indexed)
	}
	gen, err := sts[0].KB().Generation(ctx, "kb")
	if err != nil || gen == 0 {
		t.Fatalf("generation %d, %v", gen, err)
	}

	// Written again unchanged: nothing is written to the store, nothing
	// embedded but the query.
	next := kb.Updated(first)
	if err := os.WriteFile(p, []byte(airships), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-next:
	case <-time.After(20 * time.Second):
		t.Fatal("the folder's change was not seen within 20s")
	}
	search(t, first, alice, "who flies the zeppelin", 5)
	if after, err := sts[0].KB().Generation(ctx, "kb"); err != nil || after != gen {
		t.Errorf("generation %d after an unchanged write (%v), want %d: the document was written again", after, err, gen)
	}
	if _, n := e.Counts(); n != inputs+1 {
		t.Errorf("a search after an unchanged write embedded %d inputs, want the query alone", n-inputs)
	}

	// Another replica (a restart alike) embeds its query alone, and writes nothing.
	_, inputs = e.Counts()
	second := replica(t, sts[1], config)
	if r := search(t, second, alice, "who flies the zeppelin", 5); r.Ranking != "bm25+embeddings" || r.Indexed == 0 {
		t.Fatalf("the second replica: %s, %d passages", r.Ranking, r.Indexed)
	}
	if _, n := e.Counts(); n != inputs+1 {
		t.Errorf("the second replica embedded %d inputs, want the query alone", n-inputs)
	}
	if after, _ := sts[1].KB().Generation(ctx, "kb"); after != gen {
		t.Errorf("generation %d after the second replica's build, want %d: it wrote what the store held", after, gen)
	}

	// One passage changed: the first replica writes it; the second, which
	// searches first, embeds that passage and its queries, no other.
	before := len(e.Seen())
	const query = "what does the zeppelin burn"
	// Both replicas read the folder here: either may write the change,
	// and the second may be publishing it when it is searched.
	next, next2 := kb.Updated(first), kb.Updated(second)
	if err := os.WriteFile(p, []byte(strings.Replace(airships, "burns hydrogen", "burns helium-safe diesel", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case <-next:
		case <-next2:
		case <-time.After(20 * time.Second):
			t.Fatal("the folder's change was not written within 20s")
		}
		next, next2 = kb.Updated(first), kb.Updated(second)
		r := search(t, second, alice, query, 5)
		if slices.ContainsFunc(r.Passages, func(p kb.Passage) bool { return strings.Contains(p.Text, "diesel") }) {
			break
		}
	}
	embedded := slices.DeleteFunc(e.Seen()[before:], func(s string) bool { return s == query })
	if len(embedded) != 1 || !strings.Contains(embedded[0], "diesel") {
		t.Errorf("after one passage changed, embedded %q; want that passage alone", embedded)
	}
}

// BenchmarkSearchLooksAtTheStore is what a search costs on the test
// corpus in memory alone, and with a store looked at on every call (the
// generation read; a real replica looks at most once a second) on SQLite
// and PostgreSQL; and what reading the index again from the store costs
// when every document was written since (reload).
func BenchmarkSearchLooksAtTheStore(b *testing.B) {
	const query = "how long are database backups kept"
	config := folderConfig(corpus(b))
	b.Run("memory", func(b *testing.B) {
		c := build(b, "kb", config)
		search(b, c, alice, query, 5)
		for b.Loop() {
			search(b, c, alice, query, 5)
		}
	})
	for name, url := range stores {
		b.Run(name, func(b *testing.B) {
			c := replica(b, openStores(b, url(b), 1)[0], config)
			search(b, c, alice, query, 5)
			b.Run("search", func(b *testing.B) {
				for b.Loop() {
					search(b, c, alice, query, 5)
				}
			})
			b.Run("reload", func(b *testing.B) {
				for b.Loop() {
					if err := kb.ReloadAll(c); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
