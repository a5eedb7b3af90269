package store

import (
	"context"
	"time"
)

// KBPassage is one passage of a knowledge-base document (the kb
// connector's).
type KBPassage struct {
	// Headings are the headings above it, outermost first.
	Headings []string
	Text     string
	// Hash identifies the passage by its headings and text.
	Hash string
	// VectorKey names what Vector embeds (the model and the input,
	// hashed), "" when the instance embeds nothing; Vector is the
	// embedding, nil until one is set.
	VectorKey string
	Vector    []float32
}

// KBDocument is one document of a knowledge-base instance: a file or a
// page, read, with its passages in order.
type KBDocument struct {
	// Source is the file's path or the page's URL: the key within the
	// instance.
	Source string
	Kind   string
	Title  string
	Text   string
	// Hash identifies the document as indexed (its text and passages):
	// a Put of the hash stored already writes nothing.
	Hash     string
	Passages []KBPassage
	// Revision is the instance's generation the document was last written
	// at (Put, or SetVectors of one of its passages), and Updated when:
	// both set by the store.
	Revision int64
	Updated  time.Time
}

// KBVector is the embedding of the passages of one document whose hash
// is Hash.
type KBVector struct {
	Source    string
	Hash      string
	VectorKey string
	Vector    []float32
}

// KBStore keeps the documents of knowledge-base instances, for every
// replica to share one index: the replica that sees a document change
// writes it, and each replica reads the documents again when the
// instance's generation moves.
type KBStore interface {
	// Generation is the instance's counter of writes: every write that
	// changes a document of the instance (Put, Delete, SetVectors) moves
	// it, in the transaction of the change; 0 for an instance never
	// written.
	Generation(ctx context.Context, instance string) (int64, error)
	// Documents lists the instance's documents by source, without their
	// text and passages.
	Documents(ctx context.Context, instance string) ([]KBDocument, error)
	// Load returns the documents of sources whole, by source; a source
	// not stored is left out, and nil sources load them all.
	Load(ctx context.Context, instance string, sources []string) ([]KBDocument, error)
	// Put stores d as the document of its source, its passages replacing
	// the old ones in one transaction, and reports whether it wrote: a
	// document stored with d.Hash already is left as it is. A passage
	// given without a vector keeps the vector of a passage of the
	// replaced document with the same VectorKey, so that what was
	// embedded is not embedded again.
	Put(ctx context.Context, instance string, d KBDocument) (bool, error)
	// Delete deletes the document of source, reporting whether there was
	// one.
	Delete(ctx context.Context, instance, source string) (bool, error)
	// SetVectors sets the VectorKey and Vector of the passages of the
	// instance that each names by source and hash, and reports how many
	// passages it set.
	SetVectors(ctx context.Context, instance string, vs []KBVector) (int64, error)
}
