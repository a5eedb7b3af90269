package kb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/legate-mcp/legate/connectors"
)

// storeCheck is how often, at most, a call looks whether the store's
// generation of the instance moved: once a second per replica, on a call
// (an idle instance costs the store nothing), one read of one row.
const storeCheck = time.Second

// share is how a replica keeps its index with the store's: the documents
// it reads are written there, and the index it searches is what the store
// holds, read again when the store's generation moves.
type share struct {
	// Guarded by the indexer's sem.
	dirty     map[string]bool // sources read or dropped since they were last written
	gone      []string        // folders and files read whole: the store's documents beneath them not read here are dropped
	reconcile bool            // the store's documents of sources the config no longer lists are dropped

	mu      sync.Mutex // held while the snapshot is published from the store
	every   time.Duration
	gen     int64     // guarded by mu: the generation the snapshot holds
	checked time.Time // guarded by mu
	err     string    // guarded by mu: why the store could not be read at the last check
}

// touch notes that source was read or dropped. The caller holds sem.
func (ix *indexer) touch(source string) {
	if ix.shared != nil {
		ix.share.dirty[source] = true
	}
}

// owns notes that dir (or a file) was read whole here, so that what the
// store holds beneath it and was not read is dropped. The caller holds
// sem.
func (ix *indexer) owns(dir string) {
	if ix.shared != nil {
		ix.share.gone = append(ix.share.gone, dir)
	}
}

// publishShared writes the changes read to the store, then makes what it
// holds the index searched. When the store fails, the snapshot searched
// stays (the documents read, when there is none yet), with the failure
// among the problems, and the changes are written at the next publish.
// The caller holds sem.
func (ix *indexer) publishShared(problems []problem) {
	ix.share.mu.Lock()
	defer ix.share.mu.Unlock()
	err := ix.write(ix.life)
	if err == nil {
		err = ix.load(ix.life, problems, true)
	}
	if err == nil || ix.life.Err() != nil {
		return
	}
	problems = append(problems, problem{Source: "store", Problem: "the index shared through the store could not be kept: " + err.Error()})
	if s := ix.snap.Load(); s != nil {
		ix.publishDocs(s.docs, problems)
		return
	}
	ix.publishDocs(maps.Clone(ix.docs), problems)
}

// write puts the documents read since the last write into the store,
// those it holds already unchanged left alone, and deletes those dropped.
// The caller holds sem and share.mu.
func (ix *indexer) write(ctx context.Context) error {
	sh := &ix.share
	if len(sh.dirty) == 0 && len(sh.gone) == 0 && !sh.reconcile {
		return nil
	}
	listed, err := ix.shared.Documents(ctx)
	if err != nil {
		return err
	}
	stored := make(map[string]string, len(listed))
	for _, d := range listed {
		stored[d.Source] = d.Hash
	}
	var errs []error
	for src := range sh.dirty {
		d, read := ix.docs[src]
		hash, ok := stored[src]
		var err error
		switch {
		case read && (!ok || hash != d.hash):
			_, err = ix.shared.Put(ctx, ix.indexed(d))
		case !read && ok:
			_, err = ix.shared.Delete(ctx, src)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		delete(sh.dirty, src)
	}
	for src := range stored {
		if _, read := ix.docs[src]; !read && ix.drops(src) {
			if _, err := ix.shared.Delete(ctx, src); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) == 0 {
		sh.gone, sh.reconcile = nil, false
	}
	return errors.Join(errs...)
}

// drops reports whether the store's document of src, not read here, is
// to be dropped: it is beneath what was read whole here, or the config
// no longer lists it. The caller holds sem.
func (ix *indexer) drops(src string) bool {
	if slices.ContainsFunc(ix.share.gone, func(dir string) bool { return under(src, dir) }) {
		return true
	}
	if !ix.share.reconcile {
		return false
	}
	if isURL(src) {
		return !slices.Contains(ix.c.cfg.URLs, src)
	}
	return !slices.ContainsFunc(ix.c.cfg.Folders, func(dir string) bool { return under(src, filepath.Clean(dir)) })
}

// fresh returns the snapshot to search: with a store, read again first
// when the store's generation moved, looked at most every share.every. A
// call that finds another looking searches the snapshot as it is.
func (ix *indexer) fresh(ctx context.Context, s *snapshot) *snapshot {
	if ix.shared == nil || !ix.share.mu.TryLock() {
		return s
	}
	defer ix.share.mu.Unlock()
	if time.Since(ix.share.checked) >= ix.share.every {
		ix.share.err = ""
		if err := ix.load(ctx, nil, false); err != nil {
			ix.share.err = fmt.Sprintf("the index shared through the store could not be read (%v): this replica searches its last copy", err)
		}
		ix.share.checked = time.Now()
	}
	return ix.snap.Load()
}

// storeProblem is why the store could not be read at the last check, ""
// when it could.
func (ix *indexer) storeProblem() string {
	if ix.shared == nil || !ix.share.mu.TryLock() {
		return ""
	}
	defer ix.share.mu.Unlock()
	return ix.share.err
}

// load makes the store's documents the snapshot searched when its
// generation moved since the snapshot was read (always with force),
// reading again only the documents written since; problems nil keeps the
// snapshot's. The caller holds share.mu.
func (ix *indexer) load(ctx context.Context, problems []problem, force bool) error {
	gen, err := ix.shared.Generation(ctx)
	if err != nil {
		return err
	}
	old := ix.snap.Load()
	if old != nil && gen == ix.share.gen && !force {
		return nil
	}
	docs := map[string]*document{}
	var need []string // nil: all
	if old != nil {
		listed, err := ix.shared.Documents(ctx)
		if err != nil {
			return err
		}
		need = []string{}
		for _, l := range listed {
			if d := old.docs[l.Source]; d != nil && d.revision == l.Revision && d.hash == l.Hash {
				docs[l.Source] = d
			} else {
				need = append(need, l.Source)
			}
		}
	}
	if need == nil || len(need) > 0 {
		loaded, err := ix.shared.Load(ctx, need)
		if err != nil {
			return err
		}
		for _, sd := range loaded {
			docs[sd.Source] = ix.fromIndexed(sd)
		}
	}
	if problems == nil && old != nil {
		problems = old.problems
	}
	ix.share.gen, ix.share.checked = gen, time.Now()
	ix.publishDocs(docs, problems)
	return nil
}

// indexed is d as the store keeps it: with embeddings, each passage with
// the key of its input and the vector of it this replica has, if any.
func (ix *indexer) indexed(d *document) connectors.IndexedDocument {
	out := connectors.IndexedDocument{Source: d.source, Kind: d.kind, Title: d.title, Text: d.text, Hash: d.hash,
		Passages: make([]connectors.IndexedPassage, len(d.chunks))}
	for n, c := range d.chunks {
		out.Passages[n] = connectors.IndexedPassage{Headings: c.headings, Text: c.text, Hash: c.hash}
		if e := ix.c.embed; e != nil {
			key := e.Key(embedInput(passage{d, n}))
			out.Passages[n].VectorKey, out.Passages[n].Vector = key, e.cached(key)
		}
	}
	return out
}

// fromIndexed is the document the store keeps; its vectors are kept in
// the embedder's cache, by their key.
func (ix *indexer) fromIndexed(sd connectors.IndexedDocument) *document {
	d := &document{source: sd.Source, kind: sd.Kind, title: sd.Title, text: sd.Text, hash: sd.Hash, revision: sd.Revision,
		chunks: make([]chunk, len(sd.Passages))}
	for n, p := range sd.Passages {
		d.chunks[n] = chunk{headings: p.Headings, text: p.Text, hash: p.Hash}
		if e := ix.c.embed; e != nil && p.Vector != nil && p.VectorKey != "" {
			e.keep(p.VectorKey, p.Vector)
		}
	}
	return d
}
