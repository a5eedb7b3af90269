package connectors

import (
	"context"
	"time"
)

// IndexStore keeps one instance's indexed documents in the gateway's
// store (store.KBStore, for that instance), for every replica of the
// instance to share: the replica that sees a document change writes it,
// and each reads the documents again when the generation moves.
type IndexStore interface {
	// Generation moves with every write of the instance's documents.
	Generation(ctx context.Context) (int64, error)
	// Documents lists the documents by source, without text or passages.
	Documents(ctx context.Context) ([]IndexedDocument, error)
	// Load returns the documents of sources whole (nil: all), by source.
	Load(ctx context.Context, sources []string) ([]IndexedDocument, error)
	// Put stores d, its passages replacing the old ones, unless its hash
	// is stored already; a passage without a vector keeps the old vector
	// of its VectorKey. It reports whether it wrote.
	Put(ctx context.Context, d IndexedDocument) (bool, error)
	// Delete deletes the document of source, reporting whether there was
	// one.
	Delete(ctx context.Context, source string) (bool, error)
	// SetVectors sets the vectors of the passages named by source and
	// hash.
	SetVectors(ctx context.Context, vs []PassageVector) error
}

// IndexedDocument is one document of an IndexStore; Revision and
// Updated are set by the store (the generation and time of its last
// write).
type IndexedDocument struct {
	Source, Kind, Title, Text, Hash string
	Passages                        []IndexedPassage
	Revision                        int64
	Updated                         time.Time
}

// IndexedPassage is one passage of an IndexedDocument; VectorKey names
// what Vector embeds, Vector nil until set.
type IndexedPassage struct {
	Headings   []string
	Text, Hash string
	VectorKey  string
	Vector     []float32
}

// PassageVector is the embedding of the passages of Source whose hash is
// Hash.
type PassageVector struct {
	Source, Hash, VectorKey string
	Vector                  []float32
}
