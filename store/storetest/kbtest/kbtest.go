// Package kbtest is the part of the store suite (package storetest) that
// a KBStore passes: documents put whole and replaced in one write, left
// alone when their hash is stored already, vectors kept across a
// replacement by their key, set and read back exactly, instances kept
// apart, and a generation that moves with every write and no other time.
package kbtest

import (
	"context"
	"slices"
	"testing"

	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/storetest/internal/suite"
)

// must is the suite's check (package suite).
var must = suite.Must

// Run runs the suite against k, empty.
func Run(t *testing.T, k store.KBStore) {
	ctx := context.Background()
	gen := func(instance string, want int64) {
		t.Helper()
		g, err := k.Generation(ctx, instance)
		must(t, err)
		if g != want {
			t.Fatalf("generation of %s: %d, want %d", instance, g, want)
		}
	}
	put := func(instance string, d store.KBDocument, want bool) {
		t.Helper()
		wrote, err := k.Put(ctx, instance, d)
		must(t, err)
		if wrote != want {
			t.Fatalf("put %s (hash %s) in %s: wrote %v, want %v", d.Source, d.Hash, instance, wrote, want)
		}
	}
	gen("kb", 0)
	if docs, err := k.Documents(ctx, "kb"); err != nil || len(docs) != 0 {
		t.Fatalf("documents of an empty instance: %v, %v", docs, err)
	}

	handbook := store.KBDocument{Source: "/srv/handbook/leave.md", Kind: "markdown", Title: "Leave", Text: "Leave\n\nAnnual leave is 25 days.\n\nSick leave needs a note.", Hash: "h1",
		Passages: []store.KBPassage{
			{Headings: []string{"Leave", "Annual"}, Text: "Annual leave is 25 days.", Hash: "p1", VectorKey: "k1", Vector: []float32{0.6, -0.8, 1e-7}},
			{Headings: []string{"Leave", "Sick"}, Text: "Sick leave needs a note.", Hash: "p2", VectorKey: "k2"},
			{Text: "A passage under no heading.", Hash: "p3"},
		}}
	put("kb", handbook, true)
	gen("kb", 1)
	put("kb", handbook, false) // the same hash: nothing written, the generation stays
	gen("kb", 1)
	page := store.KBDocument{Source: "https://wiki.example.com/status", Kind: "html", Title: "Status", Text: "Uptime is 99.95%.", Hash: "h2",
		Passages: []store.KBPassage{{Headings: []string{"Status"}, Text: "Uptime is 99.95%.", Hash: "p4"}}}
	put("kb", page, true)
	put("other", page, true) // another instance, its own generation and documents
	gen("kb", 2)
	gen("other", 1)

	docs, err := k.Documents(ctx, "kb")
	must(t, err)
	if len(docs) != 2 || docs[0].Source != handbook.Source || docs[1].Source != page.Source ||
		docs[0].Hash != "h1" || docs[0].Revision != 1 || docs[1].Revision != 2 || docs[0].Text != "" || docs[0].Passages != nil || docs[0].Updated.IsZero() {
		t.Fatalf("documents: %+v; want the handbook (revision 1) then the page (2), listed without text", docs)
	}
	all, err := k.Load(ctx, "kb", nil)
	must(t, err)
	if len(all) != 2 || all[0].Source != handbook.Source || all[1].Source != page.Source {
		t.Fatalf("load all: %+v", all)
	}
	same(t, all[0], handbook)
	same(t, all[1], page)
	one, err := k.Load(ctx, "kb", []string{page.Source, "/srv/handbook/gone.md"})
	must(t, err)
	if len(one) != 1 || one[0].Source != page.Source {
		t.Fatalf("load of the page and a source not stored: %+v", one)
	}

	// Vectors set by source and passage hash; a hash not stored sets nothing.
	n, err := k.SetVectors(ctx, "kb", []store.KBVector{
		{Source: handbook.Source, Hash: "p2", VectorKey: "k2", Vector: []float32{1, 0}},
		{Source: handbook.Source, Hash: "nope", VectorKey: "k9", Vector: []float32{0, 1}},
	})
	if err != nil || n != 1 {
		t.Fatalf("set vectors: %d, %v; want 1", n, err)
	}
	gen("kb", 3)
	if n, err := k.SetVectors(ctx, "kb", []store.KBVector{{Source: page.Source, Hash: "nope", VectorKey: "k", Vector: []float32{1}}}); err != nil || n != 0 {
		t.Fatalf("set vectors of no passage: %d, %v", n, err)
	}
	gen("kb", 3) // nothing set, nothing moved
	docs, err = k.Documents(ctx, "kb")
	must(t, err)
	if docs[0].Revision != 3 || docs[1].Revision != 2 {
		t.Fatalf("revisions after the handbook's vectors: %d, %d; want 3, 2", docs[0].Revision, docs[1].Revision)
	}

	// A new version: its passages replace the old; one given without a
	// vector keeps the old vector of its key, whatever its position.
	changed := store.KBDocument{Source: handbook.Source, Kind: "markdown", Title: "Leave", Text: "Leave\n\nSick leave needs a note.\n\nParental leave is 20 weeks.", Hash: "h3",
		Passages: []store.KBPassage{
			{Headings: []string{"Leave", "Sick"}, Text: "Sick leave needs a note.", Hash: "p2", VectorKey: "k2"},
			{Headings: []string{"Leave", "Parental"}, Text: "Parental leave is 20 weeks.", Hash: "p5", VectorKey: "k5"},
		}}
	put("kb", changed, true)
	gen("kb", 4)
	got, err := k.Load(ctx, "kb", []string{handbook.Source})
	must(t, err)
	want := changed
	want.Passages = slices.Clone(changed.Passages)
	want.Passages[0].Vector = []float32{1, 0}
	if len(got) != 1 || got[0].Revision != 4 {
		t.Fatalf("after the change: %+v", got)
	}
	same(t, got[0], want)

	// Deleted: once.
	if ok, err := k.Delete(ctx, "kb", handbook.Source); err != nil || !ok {
		t.Fatalf("delete: %v, %v", ok, err)
	}
	gen("kb", 5)
	if ok, err := k.Delete(ctx, "kb", handbook.Source); err != nil || ok {
		t.Fatalf("delete again: %v, %v; want false", ok, err)
	}
	gen("kb", 5)
	if all, err := k.Load(ctx, "kb", nil); err != nil || len(all) != 1 || all[0].Source != page.Source {
		t.Fatalf("after the delete: %+v, %v", all, err)
	}
	if all, err := k.Load(ctx, "other", nil); err != nil || len(all) != 1 || len(all[0].Passages) != 1 {
		t.Fatalf("the other instance: %+v, %v", all, err)
	}
	// Put again after its delete, it is written again.
	put("kb", handbook, true)
	gen("kb", 6)
}

// same fails t unless got holds want's document and passages.
func same(t *testing.T, got, want store.KBDocument) {
	t.Helper()
	if got.Source != want.Source || got.Kind != want.Kind || got.Title != want.Title || got.Text != want.Text || got.Hash != want.Hash || len(got.Passages) != len(want.Passages) {
		t.Fatalf("document %+v, want %+v", got, want)
	}
	for i, p := range want.Passages {
		g := got.Passages[i]
		if !slices.Equal(g.Headings, p.Headings) || g.Text != p.Text || g.Hash != p.Hash || g.VectorKey != p.VectorKey || !slices.Equal(g.Vector, p.Vector) {
			t.Fatalf("%s passage %d: %+v, want %+v", want.Source, i, g, p)
		}
	}
}

// Shared runs on two stores of one database: what one puts the other
// loads, and of racing puts of one document exactly one writes.
func Shared(t *testing.T, a, b store.KBStore) {
	ctx := context.Background()
	d := store.KBDocument{Source: "/srv/a.md", Kind: "markdown", Title: "A", Text: "A text.", Hash: "h",
		Passages: []store.KBPassage{{Headings: []string{"A"}, Text: "A text.", Hash: "p"}}}
	results := make(chan bool, 8)
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			k := a
			if i%2 == 1 {
				k = b
			}
			wrote, err := k.Put(ctx, "kb", d)
			results <- wrote
			errs <- err
		}()
	}
	wrote := 0
	for range 8 {
		if <-results {
			wrote++
		}
		must(t, <-errs)
	}
	if wrote != 1 {
		t.Fatalf("%d of 8 racing puts of one document wrote, want 1", wrote)
	}
	if g, err := b.Generation(ctx, "kb"); err != nil || g != 1 {
		t.Fatalf("generation: %d, %v; want 1", g, err)
	}
	got, err := b.Load(ctx, "kb", nil)
	must(t, err)
	if len(got) != 1 {
		t.Fatalf("the other store loads %+v", got)
	}
	same(t, got[0], d)
}
