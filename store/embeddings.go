package store

import (
	"context"
	"time"
)

// EmbeddingStore keeps embeddings by their key (the model and a hash of
// the text embedded: embeddings.Client.Key), so that the replicas of a
// gateway, and the gateway after a restart, do not ask the endpoint for
// them again (the tool search's, package profiles).
type EmbeddingStore interface {
	// Get returns the vectors of the keys it holds, by key, and notes
	// them used at now.
	Get(ctx context.Context, keys []string, now time.Time) (map[string][]float32, error)
	// Put keeps vectors by key, used at now; a key kept already is
	// replaced.
	Put(ctx context.Context, vectors map[string][]float32, now time.Time) error
	// Prune deletes the vectors not used since before, reporting how many.
	Prune(ctx context.Context, before time.Time) (int64, error)
}
