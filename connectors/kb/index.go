package kb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/kb/extract"
	"github.com/legate-mcp/legate/search"
)

// document is one file or page, read.
type document struct {
	source string // its absolute path, or its URL
	kind   string
	title  string
	text   string
	chunks []chunk
	hash   string // of kind, title, text and passages: what the store compares
	// revision is the store's generation the document was written at, 0
	// for a document read here.
	revision int64
}

// passage is one chunk of one document in a snapshot.
type passage struct {
	doc *document
	n   int // its position in doc.chunks
}

func (p passage) chunk() *chunk { return &p.doc.chunks[p.n] }

// problem is a source that could not be read, or not all of it.
type problem struct {
	Source  string `json:"source" jsonschema:"The folder, file or URL"`
	Problem string `json:"problem" jsonschema:"What went wrong"`
}

// snapshot is the index at one time: immutable, searched without locks.
type snapshot struct {
	docs     map[string]*document
	chunks   []passage // by source, then position: the same order on every replica
	bm25     *search.Index
	problems []problem
	// vectors are the embeddings of chunks, by position, once all are
	// embedded (embeddings_url).
	vectors atomic.Pointer[[][]float32]
}

// indexer keeps the instance's index: the documents read from its
// sources, and the snapshot searched.
type indexer struct {
	life context.Context // the instance's: ends at Close
	c    *Connector
	sem  chan struct{} // held while the index is changed

	// Guarded by sem.
	docs     map[string]*document
	problems map[string]string // by source

	// The store's share of the index (shared.go); nil without a store.
	shared connectors.IndexStore
	share  share

	loaded  atomic.Int64 // documents added, for a caller waiting for the build
	snap    atomic.Pointer[snapshot]
	ready   chan struct{} // closed when the first build ends
	mu      sync.Mutex
	started bool          // guarded by mu
	closed  bool          // guarded by mu
	updated chan struct{} // guarded by mu; closed when the next snapshot is published
	wg      sync.WaitGroup
}

func newIndexer(life context.Context, c *Connector, shared connectors.IndexStore) *indexer {
	return &indexer{life: life, c: c, sem: make(chan struct{}, 1), docs: map[string]*document{},
		problems: map[string]string{}, updated: make(chan struct{}), ready: make(chan struct{}),
		shared: shared, share: share{every: storeCheck, dirty: map[string]bool{}}}
}

// lock takes the right to change the index, or fails when ctx ends first.
func (ix *indexer) lock(ctx context.Context) error {
	select {
	case ix.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (ix *indexer) unlock() { <-ix.sem }

// ensure returns the index, building it first if it has never been. The
// build runs on the instance's life, not the call's: a call that ends
// before it does fails (TIMEOUT, saying so), and a later one finds it
// built.
func (ix *indexer) ensure(ctx context.Context) (*snapshot, error) {
	if s := ix.snap.Load(); s != nil {
		return ix.fresh(ctx, s), nil
	}
	ix.mu.Lock()
	if ix.closed {
		ix.mu.Unlock()
		return nil, legate.Errorf(legate.CodeTransient, "kb: the instance is closed")
	}
	if !ix.started {
		ix.started = true
		ix.wg.Add(1)
		go ix.build()
	}
	ix.mu.Unlock()
	select {
	case <-ix.ready:
		if s := ix.snap.Load(); s != nil {
			return s, nil
		}
		return nil, legate.Errorf(legate.CodeTransient, "kb: the instance is closed")
	case <-ctx.Done():
		return nil, legate.Errorf(legate.CodeOf(ctx.Err()), "kb: the index is still being built (%d documents read so far): call again shortly", ix.loaded.Load())
	}
}

// build reads every folder and fetches every URL, publishes the index,
// then watches the folders and fetches the URLs again on schedule.
func (ix *indexer) build() {
	defer ix.wg.Done()
	defer close(ix.ready)
	if ix.lock(ix.life) != nil {
		return
	}
	defer ix.unlock()
	w := ix.startWatcher()
	for _, f := range ix.c.cfg.Folders {
		ix.loadTree(filepath.Clean(f), w)
	}
	ix.fetchAll(ix.life)
	ix.share.reconcile = true
	if ix.life.Err() != nil {
		if w != nil {
			w.Close()
		}
		return
	}
	ix.publish()
	if w != nil {
		ix.wg.Add(1)
		go ix.watch(w)
	}
	if len(ix.c.cfg.URLs) > 0 && ix.c.cfg.RefreshInterval > 0 {
		ix.wg.Add(1)
		go ix.refresh()
	}
}

// close stops the build, the watcher and the refresher, and waits for
// them.
func (ix *indexer) close() {
	ix.mu.Lock()
	ix.closed = true
	ix.mu.Unlock()
	ix.wg.Wait()
}

// publish makes the documents read so far the index searched, and wakes
// those waiting for it: with a store, what it holds once they are written
// to it (shared.go). The caller holds sem.
func (ix *indexer) publish() {
	var problems []problem
	for src, p := range ix.problems {
		problems = append(problems, problem{Source: src, Problem: p})
	}
	slices.SortFunc(problems, func(a, b problem) int { return strings.Compare(a.Source, b.Source) })
	if ix.shared != nil {
		ix.publishShared(problems)
		return
	}
	ix.publishDocs(maps.Clone(ix.docs), problems)
}

// publishDocs makes docs the index searched, with problems. The caller
// holds sem or, with a store, share.mu.
func (ix *indexer) publishDocs(docs map[string]*document, problems []problem) {
	s := &snapshot{docs: docs, problems: problems}
	sources := make([]string, 0, len(docs))
	for src := range docs {
		sources = append(sources, src)
	}
	slices.Sort(sources)
	var sds []search.Doc
	for _, src := range sources {
		d := docs[src]
		for n := range d.chunks {
			s.chunks = append(s.chunks, passage{doc: d, n: n})
			sds = append(sds, searchDoc(d, &d.chunks[n]))
		}
	}
	s.bm25 = search.New(sds)
	ix.snap.Store(s)
	ix.mu.Lock()
	close(ix.updated)
	ix.updated = make(chan struct{})
	ix.mu.Unlock()
}

// searchDoc is a passage as package search ranks it: the section's own
// heading as the name, the document's title as the title, the passage's
// text as the description, and the headings between them with the
// file's or page's name as the source.
func searchDoc(d *document, c *chunk) search.Doc {
	sd := search.Doc{Title: d.title, Description: c.text}
	hs := c.headings
	if len(hs) > 0 {
		sd.Name = hs[len(hs)-1]
		hs = hs[:len(hs)-1]
	}
	if len(hs) > 0 && hs[0] == d.title {
		hs = hs[1:]
	}
	base := filepath.Base(d.source)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	sd.Source = strings.Join(append(slices.Clone(hs), base), " ")
	return sd
}

// updatedChan is closed when the next snapshot is published.
func (ix *indexer) updatedChan() <-chan struct{} {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.updated
}

// add keeps d as the document of its source, unless max_documents are
// kept already. The caller holds sem.
func (ix *indexer) add(d *document) bool {
	if _, ok := ix.docs[d.source]; !ok && len(ix.docs) >= ix.c.cfg.MaxDocuments {
		ix.problems[d.source] = "skipped: max_documents reached"
		return false
	}
	ix.docs[d.source] = d
	ix.touch(d.source)
	delete(ix.problems, d.source)
	ix.loaded.Add(1)
	return true
}

// newDocument reads data of kind as the document of source.
func (ix *indexer) newDocument(source, kind, name string, data []byte) (*document, error) {
	ex, err := extract.Extract(kind, name, data)
	if err != nil {
		return nil, err
	}
	d := &document{source: source, kind: kind, title: ex.Title, text: ex.Text,
		chunks: chunkSections(ex.Sections, ix.c.cfg.ChunkChars)}
	h := sha256.New()
	for _, s := range []string{kind, ex.Title, ex.Text} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	for _, c := range d.chunks {
		h.Write([]byte(c.hash))
	}
	d.hash = hex.EncodeToString(h.Sum(nil)[:16])
	return d, nil
}
