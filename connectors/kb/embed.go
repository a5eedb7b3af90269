package kb

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
)

// maxEmbedInput bounds the characters of one passage sent to be embedded:
// its title, headings and text, cut.
const maxEmbedInput = 4000

// maxEmbeddingsAnswer bounds an embeddings endpoint's answer.
const maxEmbeddingsAnswer = 256 << 20

// embedder asks an OpenAI-compatible /v1/embeddings endpoint for the
// vectors of passages and queries, and keeps those of passages by their
// input, so that a passage is embedded once while it is unchanged.
type embedder struct {
	url, model string
	batch      int
	client     *http.Client

	// save, when set, keeps the vectors embedded in the store, for the
	// other replicas (and a restart) not to embed them again.
	save func(ctx context.Context, vs []connectors.PassageVector) error

	mu     sync.Mutex
	cache  map[string][]float32 // by inputKey
	failed time.Time            // when a search's embedding last failed
	why    string               // and why
}

// pause is how long searches leave the endpoint alone after it failed
// one, ranking by BM25 alone, so that a down endpoint does not slow
// every search by its retries.
const pause = 30 * time.Second

// paused says why searches leave the endpoint alone now, "" when they
// do not.
func (e *embedder) paused(now time.Time) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.why == "" || now.Sub(e.failed) >= pause {
		return ""
	}
	return fmt.Sprintf("%s (at %s; tried again %s after)", e.why, e.failed.UTC().Format(time.RFC3339), pause)
}

// noteFailure records why a search's embedding failed; "" clears it.
func (e *embedder) noteFailure(why string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failed, e.why = time.Now(), why
}

func newEmbedder(cfg *Config) *embedder {
	var allow []string
	if hp, err := netguard.HostPort(cfg.EmbeddingsURL); err == nil {
		allow = []string{hp} // the operator's own endpoint, a local model server as often as not
	}
	return &embedder{url: cfg.EmbeddingsURL, model: cfg.EmbeddingsModel, batch: cfg.EmbeddingsBatch,
		cache: map[string][]float32{},
		client: netguard.NewClient(netguard.Options{Allow: allow, Timeout: time.Duration(cfg.Timeout),
			Hint: "only the instance's embeddings_url may be on such an address"})}
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

func (e *embedder) inputKey(input string) string {
	h := sha256.Sum256([]byte(e.model + "\x00" + input))
	return hex.EncodeToString(h[:16])
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
		keys[i] = e.inputKey(embedInput(p))
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

type embeddingsRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embeddingsAnswer struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// embed asks the endpoint for the vectors of inputs, each normalised to
// unit length. The request carries an Idempotency-Key (a hash of it), so
// that it is sent again on 429 and 5xx: it changes nothing.
func (e *embedder) embed(ctx context.Context, creds connectors.Credentials, inputs []string) ([][]float32, error) {
	key := ""
	if creds != nil && creds.Has(embeddingCredential) {
		v, err := creds.Get(ctx, embeddingCredential)
		if err != nil {
			return nil, connectors.CredentialError("kb: embeddings", embeddingCredential, err)
		}
		key = v
	}
	secrets := legate.NewSecrets(key)
	body, err := json.Marshal(embeddingsRequest{Model: e.model, Input: inputs})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	r := httpkit.Retry{MaxAttempts: 3, MaxElapsed: 30 * time.Second}
	resp, _, err := r.Do(ctx, e.client, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(httpkit.DefaultKeyHeader, hex.EncodeToString(sum[:16]))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		return req, nil
	})
	if err != nil {
		return nil, httpkit.TransportError(ctx, err, "kb: embeddings")
	}
	defer httpkit.Drain(resp)
	if resp.StatusCode != http.StatusOK {
		msg := fmt.Sprintf("kb: the embeddings endpoint answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
		if s := httpkit.Snippet(resp, secrets); s != "" {
			msg += ": " + s
		}
		return nil, httpkit.StatusError(resp, msg)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxEmbeddingsAnswer))
	if err != nil {
		return nil, httpkit.TransportError(ctx, err, "kb: embeddings")
	}
	var ans embeddingsAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, legate.Errorf(legate.CodeAdapterMapping, "kb: the embeddings endpoint's answer is not an embeddings list: %v", err)
	}
	out := make([][]float32, len(inputs))
	dims := -1
	for _, d := range ans.Data {
		if d.Index < 0 || d.Index >= len(inputs) || out[d.Index] != nil {
			return nil, legate.Errorf(legate.CodeAdapterMapping, "kb: the embeddings endpoint answered index %d for %d inputs", d.Index, len(inputs))
		}
		if dims >= 0 && len(d.Embedding) != dims || len(d.Embedding) == 0 {
			return nil, legate.Errorf(legate.CodeAdapterMapping, "kb: the embeddings endpoint answered vectors of different lengths (%d, %d)", dims, len(d.Embedding))
		}
		dims = len(d.Embedding)
		out[d.Index] = normalize(d.Embedding)
	}
	for i, v := range out {
		if v == nil {
			return nil, legate.Errorf(legate.CodeAdapterMapping, "kb: the embeddings endpoint answered no vector for input %d of %d", i, len(inputs))
		}
	}
	return out, nil
}

func normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return v
	}
	n := float32(1 / math.Sqrt(sum))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * n
	}
	return out
}

// dot is the cosine of two unit vectors; 0 when their lengths differ.
func dot(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// rrfK is reciprocal rank fusion's constant: a passage ranked r-th (from
// 1) in a list adds 1/(rrfK+r), as Cormack, Clarke and Büttcher (2009) set it.
const rrfK = 60

// fuse ranks passages by the sum of their reciprocal ranks in the lists
// given, each best first; equal sums keep the lower passage number first.
func fuse(lists ...[]int) []scored {
	score := map[int]float64{}
	for _, l := range lists {
		for r, p := range l {
			score[p] += 1 / float64(rrfK+r+1)
		}
	}
	out := make([]scored, 0, len(score))
	for p, s := range score {
		out = append(out, scored{p, s})
	}
	slices.SortFunc(out, byScore)
	return out
}

// scored is a passage's number in its snapshot and its score.
type scored struct {
	n     int
	score float64
}

// byScore orders passages best first, the lower number first on a tie.
func byScore(a, b scored) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	return a.n - b.n
}

// dense ranks the passages by the cosine of their vectors to q, best
// first, the first limit.
func dense(q []float32, vs [][]float32, limit int) []int {
	all := make([]scored, 0, len(vs))
	for i, v := range vs {
		if v != nil {
			all = append(all, scored{i, dot(q, v)})
		}
	}
	slices.SortFunc(all, byScore)
	out := make([]int, 0, min(limit, len(all)))
	for _, s := range all[:min(limit, len(all))] {
		out = append(out, s.n)
	}
	return out
}
