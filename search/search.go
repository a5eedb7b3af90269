// Package search finds tools by what a person asks for: BM25F over each
// tool's name, title, description and parameters, with the words split
// at snake_case, camelCase and dots, short forms spelled out, Porter2
// stemming, a table of synonyms (ticket for issue, remove for delete,
// folder for directory), pairs of adjacent words, and the request's verb
// matched to the tool's (README.md).
//
// An Index is built once per set of tools and is immutable, so searches
// run concurrently without locks:
//
//	ix := search.New([]search.Doc{
//		{Name: "github.create_issue", Description: "Open an issue in a repository"},
//		{Name: "slack.post_message", Description: "Post a message to a channel"},
//	})
//	hits := ix.Search("file a ticket about the login bug", search.Options{Limit: 5})
//	// hits[0].Doc == 0
package search

import (
	"math"
	"slices"
	"strings"
	"sync"
)

// Doc is one tool as the index reads it.
type Doc struct {
	// Name is the tool's name, e.g. "github.create_issue" or
	// "mcp.notion.API-post-page"; each of its words counts most.
	Name string
	// Title is the tool's human title, if any.
	Title string
	// Description is the tool's description.
	Description string
	// Params are the tool's parameters: names and descriptions.
	Params []Param
	// Source is the connector instance or upstream the tool comes from;
	// its words count as the name's do, less.
	Source string
	// Aliases are other exact names the tool answers to (its wire name):
	// a query that is one of them finds the tool first.
	Aliases []string
}

// Param is one parameter of a tool.
type Param struct {
	Name        string
	Description string
}

// The fields of a Doc, and how much a term in each counts.
const (
	fieldName = iota
	fieldSource
	fieldTitle
	fieldDescription
	fieldLead
	fieldParams
	numFields
)

var fieldWeight = [numFields]float64{
	fieldName:        3.0,
	fieldSource:      1.5,
	fieldTitle:       2.0,
	fieldDescription: 1.0,
	fieldLead:        0.6, // the description's first sentence, again: what the tool does, before its details
	fieldParams:      0.4,
}

// BM25F parameters: k1 saturates a term's frequency, b normalizes by a
// field's length relative to the field's average.
const (
	k1 = 1.2
	b  = 0.6
)

// synonymWeight is how much a synonym of a query term counts against the
// term itself.
const synonymWeight = 0.6

// pairWeight is how much a pair of adjacent request terms found adjacent
// in one field of a tool ("pull request", "web page") counts, beside its
// two terms.
const pairWeight = 0.3

// verbBonus is how much more a tool counts when a verb of its name is of
// an action class a verb of the request names ("remove" for
// delete_entities), or, for a question without a verb, a read (get,
// list, search). Set on the tune and dev requests: more ranked worse.
const verbBonus = 0.1

// sourceBonus is how much more a tool counts when the request names its
// source (the upstream or connector instance it comes from). Set on the
// tune, dev and dev-b requests: 0.2–0.5 rank them alike.
const sourceBonus = 0.25

// posting is one document's precomputed score for one term.
type posting struct {
	doc   int32
	score float32
}

// Index is an immutable search index over a set of tools.
type Index struct {
	n        int
	postings map[string][]posting
	exact    map[string]int32   // lower-cased name or alias → doc
	actions  []uint32           // by doc, the action classes of its name's verbs
	bySource map[string][]int32 // a source's term → the docs of that source
	scratch  sync.Pool          // *scratch
}

// scratch is one search's working memory, reused.
type scratch struct {
	scores  []float32 // by doc; zero outside a search
	touched []int32   // docs scored by the search
	best    []float32 // by doc, one query term's best match; zero outside a term
	matched []int32   // docs the term matched
}

// New builds an index of docs; a hit's Doc is the position in docs.
func New(docs []Doc) *Index {
	ix := &Index{n: len(docs), postings: map[string][]posting{}, exact: make(map[string]int32, len(docs)), actions: make([]uint32, len(docs)), bySource: map[string][]int32{}}
	ix.scratch.New = func() any { return &scratch{scores: make([]float32, len(docs)), best: make([]float32, len(docs))} }
	type fieldTerms [numFields][]string
	all := make([]fieldTerms, len(docs))
	var total [numFields]float64
	stems := map[string]string{}
	for i, d := range docs {
		var ft fieldTerms
		ft[fieldName] = appendTerms(nil, d.Name, stems)
		ft[fieldSource] = appendTerms(nil, d.Source, stems)
		for _, t := range ft[fieldSource] {
			if ds := ix.bySource[t]; len(ds) == 0 || ds[len(ds)-1] != int32(i) {
				ix.bySource[t] = append(ds, int32(i))
			}
		}
		ft[fieldTitle] = appendTerms(nil, d.Title, stems)
		ft[fieldDescription] = appendTerms(nil, d.Description, stems)
		ft[fieldLead] = appendTerms(nil, lead(d.Description), stems)
		for _, p := range d.Params {
			ft[fieldParams] = appendTerms(ft[fieldParams], p.Name, stems)
			ft[fieldParams] = appendTerms(ft[fieldParams], p.Description, stems)
		}
		for f := range ft {
			total[f] += float64(len(ft[f]))
		}
		all[i] = ft
		ix.actions[i] = nameActions(d.Name)
		ix.exact[strings.ToLower(d.Name)] = int32(i)
		for _, a := range d.Aliases {
			ix.exact[strings.ToLower(a)] = int32(i)
		}
	}
	var avg [numFields]float64
	for f := range avg {
		avg[f] = max(total[f]/float64(max(len(docs), 1)), 1)
	}
	// BM25F: a term's frequencies in each field, weighted and normalized
	// by the field's length, are summed, then saturated once.
	tf := map[string]float64{}
	weighted := map[string][]posting{}
	for i, ft := range all {
		clear(tf)
		for f, ts := range ft {
			norm := 1 - b + b*float64(len(ts))/avg[f]
			for _, t := range ts {
				tf[t] += fieldWeight[f] / norm
			}
		}
		// Pairs of adjacent terms count as terms of their own ("pull
		// request", "knowledge graph"), within one field; not the
		// parameters', which would double the index for little.
		for f, ts := range ft[:fieldLead] {
			norm := 1 - b + b*float64(len(ts))/avg[f]
			for j := 1; j < len(ts); j++ {
				tf[ts[j-1]+" "+ts[j]] += fieldWeight[f] / norm
			}
		}
		for t, v := range tf {
			weighted[t] = append(weighted[t], posting{doc: int32(i), score: float32(v / (k1 + v))})
		}
	}
	for t, ps := range weighted {
		idf := math.Log(1 + (float64(len(docs))-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
		for j := range ps {
			ps[j].score *= float32(idf)
		}
		ix.postings[t] = slices.Clip(ps)
	}
	return ix
}

// Len is the number of documents indexed.
func (ix *Index) Len() int { return ix.n }

// Options narrow a search.
type Options struct {
	// Limit is the most hits returned (default 10).
	Limit int
	// Keep, when set, reports whether a document may be a hit.
	Keep func(doc int) bool
}

// Hit is one document found, best first.
type Hit struct {
	Doc   int
	Score float64
}

// Search returns the documents that best match query, best first. A query
// that is a document's exact name or alias finds it first.
func (ix *Index) Search(query string, o Options) []Hit {
	if o.Limit <= 0 {
		o.Limit = 10
	}
	qws := queryWords(query)
	qts := queryTerms(qws)
	// scores is zero between searches: only the documents touched are
	// visited, and reset, so a search costs its postings, not the index.
	sc := ix.scratch.Get().(*scratch)
	defer ix.scratch.Put(sc)
	scores, touched, best, matched := sc.scores, sc.touched[:0], sc.best, sc.matched[:0]
	add := func(d int32, v float32) {
		if scores[d] == 0 {
			touched = append(touched, d)
		}
		scores[d] += v
	}
	// A term counts once per document: its own match, or its best
	// synonym's at synonymWeight, whichever is more; a tool that says
	// "create", "add" and "new" is no better a match for "make" than
	// one that says "create".
	match := func(t string, w float32) {
		for _, p := range ix.postings[t] {
			if v := w * p.score; v > best[p.doc] {
				if best[p.doc] == 0 {
					matched = append(matched, p.doc)
				}
				best[p.doc] = v
			}
		}
	}
	for _, qt := range qts {
		match(qt.term, qt.weight)
		for _, s := range qt.synonyms {
			match(s, synonymWeight)
		}
		for _, d := range matched {
			add(d, best[d])
			best[d] = 0
		}
		matched = matched[:0]
	}
	if qa := queryActions(qws); qa != 0 {
		for _, d := range touched {
			if ix.actions[d]&qa != 0 {
				scores[d] *= 1 + verbBonus
			}
		}
	}
	// A request that names a tool's source ("…in Notion", "the github
	// issue") wants that source's tools: each counts sourceBonus more,
	// once however many of its source's words the request says (best
	// marks those counted; it is zero outside a term).
	for _, qt := range qts {
		for _, d := range ix.bySource[qt.term] {
			if scores[d] > 0 && best[d] == 0 {
				scores[d] *= 1 + sourceBonus
				best[d] = 1
				matched = append(matched, d)
			}
		}
	}
	for _, d := range matched {
		best[d] = 0
	}
	sc.matched = matched[:0]
	if d, ok := ix.exact[strings.ToLower(strings.TrimSpace(query))]; ok {
		add(d, 1000)
	}
	defer func() {
		for _, d := range touched {
			scores[d] = 0
		}
		sc.touched = touched
	}()
	// The best o.Limit, by score, then (for equal scores) the earlier
	// document first: touched is in no order, and sorting it would cost
	// more than the search.
	before := func(a, b Hit) bool { return a.Score > b.Score || a.Score == b.Score && a.Doc < b.Doc }
	hits := make([]Hit, 0, o.Limit+1)
	for _, d32 := range touched {
		d, s := int(d32), scores[d32]
		if s <= 0 {
			continue
		}
		h := Hit{Doc: d, Score: float64(s)}
		if len(hits) == o.Limit && !before(h, hits[len(hits)-1]) || o.Keep != nil && !o.Keep(d) {
			continue
		}
		i, _ := slices.BinarySearchFunc(hits, h, func(a, b Hit) int {
			if before(a, b) {
				return -1
			}
			return 1
		})
		hits = slices.Insert(hits, i, h)
		if len(hits) > o.Limit {
			hits = hits[:o.Limit]
		}
	}
	return hits
}

// queryTerm is one term of a query, its weight and its synonyms.
type queryTerm struct {
	term     string
	weight   float32
	synonyms []string
}

// queryTerms are the terms of a query's words (queryWords), each once
// however often it comes, with their synonyms, and the pairs of adjacent
// terms at pairWeight; in order, so that the same search sums the same
// floats.
func queryTerms(qws []string) []queryTerm {
	ts := appendWordTerms(nil, qws, nil)
	out := make([]queryTerm, 0, 2*len(ts))
	for i, t := range ts {
		out = append(out, queryTerm{term: t, weight: 1, synonyms: synonyms()[t]})
		if i > 0 {
			out = append(out, queryTerm{term: ts[i-1] + " " + t, weight: pairWeight})
		}
	}
	slices.SortFunc(out, func(a, b queryTerm) int { return strings.Compare(a.term, b.term) })
	return slices.CompactFunc(out, func(a, b queryTerm) bool { return a.term == b.term })
}

// nameActions are the action classes of the verbs of a tool's name.
func nameActions(name string) uint32 {
	var m uint32
	for _, t := range words2terms(name) {
		m |= actionClasses()[t]
	}
	return m
}

// queryActions are the action classes of a request's verbs; for a
// question with none, the reads.
func queryActions(ws []string) uint32 {
	var m uint32
	for i, w := range ws {
		// "open a ticket", not "the open tickets"; "in config.go change…"
		if i == 0 || verbBefore[ws[i-1]] || ws[0] == "in" && (ws[i-1] == "file" || ws[i-1] == "path") {
			m |= actionClasses()[stem(w)]
		}
	}
	if m == 0 && len(ws) > 0 && questionWords[ws[0]] {
		m = readActions
	}
	return m
}

// lead is the first sentence of a description: up to its first line end,
// or its first '.', '!' or '?' that ends a sentence.
func lead(desc string) string {
	for i := 0; i < len(desc); i++ {
		switch desc[i] {
		case '\n':
			return desc[:i]
		case '.', '!', '?':
			if i+1 == len(desc) || desc[i+1] == ' ' {
				return desc[:i]
			}
		}
	}
	return desc
}
