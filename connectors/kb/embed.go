package kb

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/embeddings"
)

// maxEmbedInput bounds the characters of one passage sent to be embedded:
// its title, headings and text, cut.
const maxEmbedInput = 4000

// embedder embeds passages through an embeddings endpoint and keeps their
// vectors by their input, so that a passage is embedded once while it is
// unchanged.
type embedder struct {
	*embeddings.Client
	batch int

	// save, when set, keeps the vectors embedded in the store, for the
	// other replicas (and a restart) not to embed them again.
	save func(ctx context.Context, vs []connectors.PassageVector) error

	mu    sync.Mutex
	cache map[string][]float32 // by Key
}

func newEmbedder(cfg *Config) *embedder {
	return &embedder{batch: cfg.EmbeddingsBatch, cache: map[string][]float32{},
		Client: embeddings.New(embeddings.Options{URL: cfg.EmbeddingsURL, Model: cfg.EmbeddingsModel, Name: "kb", Timeout: time.Duration(cfg.Timeout)})}
}

// embedInput is what is embedded of a passage: its document's title, its
// headings and its text.
func embedInput(p passage) string {
	c := p.chunk()
	var b strings.Builder
	hs := c.headings
	if len(hs) == 0 || hs[0] != p.doc.title {
		b.WriteString(p.doc.title)
		b.WriteString("\n")
	}
	b.WriteString(strings.Join(hs, " / "))
	b.WriteString("\n\n")
	b.WriteString(c.text)
	return truncateRunes(b.String(), maxEmbedInput)
}

// cached is the vector of key, nil when none is known.
func (e *embedder) cached(key string) []float32 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cache[key]
}

// keep learns the vector of key (one the store kept).
func (e *embedder) keep(key string, v []float32) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cache[key] = v
}

// vectors returns the vector of each passage of s, in its order,
// embedding those not embedded yet.
func (e *embedder) vectors(ctx context.Context, creds connectors.Credentials, s *snapshot) ([][]float32, error) {
	if vs := s.vectors.Load(); vs != nil {
		return *vs, nil
	}
	out := make([][]float32, len(s.chunks))
	keys := make([]string, len(s.chunks))
	var missing []int
	e.mu.Lock()
	for i, p := range s.chunks {
		keys[i] = e.Key(embedInput(p))
		if v, ok := e.cache[keys[i]]; ok {
			out[i] = v
		} else {
			missing = append(missing, i)
		}
	}
	e.mu.Unlock()
	for start := 0; start < len(missing); start += e.batch {
		part := missing[start:min(start+e.batch, len(missing))]
		inputs := make([]string, len(part))
		for j, i := range part {
			inputs[j] = embedInput(s.chunks[i])
		}
		vs, err := e.embed(ctx, creds, inputs)
		if err != nil {
			return nil, fmt.Errorf("%w (%d of %d passages embedded)", err, start, len(missing))
		}
		e.mu.Lock()
		for j, i := range part {
			out[i] = vs[j]
			e.cache[keys[i]] = vs[j]
		}
		e.mu.Unlock()
	}
	if e.save != nil && len(missing) > 0 {
		kept := make([]connectors.PassageVector, len(missing))
		for j, i := range missing {
			p := s.chunks[i]
			kept[j] = connectors.PassageVector{Source: p.doc.source, Hash: p.chunk().hash, VectorKey: keys[i], Vector: out[i]}
		}
		// Best effort: unsaved, they are embedded again elsewhere, not lost.
		_ = e.save(ctx, kept)
	}
	e.prune(keys)
	s.vectors.Store(&out)
	return out, nil
}

// prune forgets the vectors of passages no longer indexed, once they
// outnumber those that are.
func (e *embedder) prune(keep []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.cache) <= 2*len(keep)+64 {
		return
	}
	live := make(map[string]bool, len(keep))
	for _, k := range keep {
		live[k] = true
	}
	for k := range e.cache {
		if !live[k] {
			delete(e.cache, k)
		}
	}
}

// embed asks the endpoint for the vectors of inputs, with the instance's
// key when it has one.
func (e *embedder) embed(ctx context.Context, creds connectors.Credentials, inputs []string) ([][]float32, error) {
	key := ""
	if creds != nil && creds.Has(embeddingCredential) {
		v, err := creds.Get(ctx, embeddingCredential)
		if err != nil {
			return nil, connectors.CredentialError("kb: embeddings", embeddingCredential, err)
		}
		key = v
	}
	return e.Embed(ctx, key, inputs)
}
