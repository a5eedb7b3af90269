// Package embeddings asks an OpenAI-compatible /v1/embeddings endpoint
// (OpenAI's, or a local Ollama, vLLM or llama.cpp server) for the vectors
// of texts, ranks by their cosine, and fuses that ranking with a lexical
// one by reciprocal rank. It is the dense half of the knowledge base's
// search (connectors/kb) and of legate.search_tools (profiles).
package embeddings

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
	"sync"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
)

// maxAnswer bounds an endpoint's answer.
const maxAnswer = 256 << 20

// Pause is how long rankings leave the endpoint alone after it failed
// one, ranking by the lexical half alone, so that a down endpoint does
// not slow every search by its retries.
const Pause = 30 * time.Second

// Client asks one endpoint for one model's vectors.
type Client struct {
	url, model, name string
	http             *http.Client
	maxElapsed       time.Duration

	mu     sync.Mutex
	failed time.Time // when a ranking's embedding last failed
	why    string    // and why
}

// Options configure a Client.
type Options struct {
	// URL is the endpoint, e.g. http://127.0.0.1:11434/v1/embeddings.
	URL string
	// Model is the model name sent with every request.
	Model string
	// Name prefixes errors: "kb", "search".
	Name string
	// Timeout bounds one request (default 30 s); MaxElapsed bounds one
	// Embed with its retries (default 30 s).
	Timeout, MaxElapsed time.Duration
}

// New is a client of o.URL. The endpoint's own host is allowed even on a
// loopback or private address (a local model server, as often as not);
// redirects elsewhere are held to the usual guard.
func New(o Options) *Client {
	var allow []string
	if hp, err := netguard.HostPort(o.URL); err == nil {
		allow = []string{hp}
	}
	return &Client{url: o.URL, model: o.Model, name: o.Name, maxElapsed: cmp.Or(o.MaxElapsed, 30*time.Second),
		http: netguard.NewClient(netguard.Options{Allow: allow, Timeout: cmp.Or(o.Timeout, 30*time.Second),
			Hint: "only the configured embeddings_url may be on such an address"})}
}

// Model is the model the client asks for.
func (c *Client) Model() string { return c.model }

// Key identifies input as embedded by this client's model: vectors kept
// by it stay valid while the model is the same.
func (c *Client) Key(input string) string {
	h := sha256.Sum256([]byte(c.model + "\x00" + input))
	return hex.EncodeToString(h[:16])
}

// Paused says why rankings leave the endpoint alone now, "" when they do
// not: for Pause after NoteFailure.
func (c *Client) Paused(now time.Time) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.why == "" || now.Sub(c.failed) >= Pause {
		return ""
	}
	return fmt.Sprintf("%s (at %s; tried again %s after)", c.why, c.failed.UTC().Format(time.RFC3339), Pause)
}

// NoteFailure records why a ranking's embedding failed.
func (c *Client) NoteFailure(why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed, c.why = time.Now(), why
}

// CloseIdleConnections closes the client's idle connections.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

type request struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type answer struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// Embed asks the endpoint for the vectors of inputs, each normalised to
// unit length, with key as its bearer key ("" for none). The request
// carries an Idempotency-Key (a hash of it), so that it is sent again on
// 429 and 5xx: it changes nothing. Errors are canonical and never hold
// the key.
func (c *Client) Embed(ctx context.Context, key string, inputs []string) ([][]float32, error) {
	secrets := legate.NewSecrets(key)
	body, err := json.Marshal(request{Model: c.model, Input: inputs})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	r := httpkit.Retry{MaxAttempts: 3, MaxElapsed: c.maxElapsed}
	resp, _, err := r.Do(ctx, c.http, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
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
		return nil, httpkit.TransportError(ctx, err, c.name+": embeddings")
	}
	defer httpkit.Drain(resp)
	if resp.StatusCode != http.StatusOK {
		msg := fmt.Sprintf("%s: the embeddings endpoint answered %d %s", c.name, resp.StatusCode, http.StatusText(resp.StatusCode))
		if s := httpkit.Snippet(resp, secrets); s != "" {
			msg += ": " + s
		}
		return nil, httpkit.StatusError(resp, msg)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, httpkit.TransportError(ctx, err, c.name+": embeddings")
	}
	var ans answer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, legate.Errorf(legate.CodeAdapterMapping, "%s: the embeddings endpoint's answer is not an embeddings list: %v", c.name, err)
	}
	out := make([][]float32, len(inputs))
	dims := -1
	for _, d := range ans.Data {
		if d.Index < 0 || d.Index >= len(inputs) || out[d.Index] != nil {
			return nil, legate.Errorf(legate.CodeAdapterMapping, "%s: the embeddings endpoint answered index %d for %d inputs", c.name, d.Index, len(inputs))
		}
		if dims >= 0 && len(d.Embedding) != dims || len(d.Embedding) == 0 {
			return nil, legate.Errorf(legate.CodeAdapterMapping, "%s: the embeddings endpoint answered vectors of different lengths (%d, %d)", c.name, dims, len(d.Embedding))
		}
		dims = len(d.Embedding)
		out[d.Index] = Normalize(d.Embedding)
	}
	for i, v := range out {
		if v == nil {
			return nil, legate.Errorf(legate.CodeAdapterMapping, "%s: the embeddings endpoint answered no vector for input %d of %d", c.name, i, len(inputs))
		}
	}
	return out, nil
}

// Normalize is v scaled to unit length (v itself when it is zero).
func Normalize(v []float32) []float32 {
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

// Dot is the cosine of two unit vectors; 0 when their lengths differ.
// It sums in eight float32 lanes (the compiler does not vectorise a
// loop): a search scores every tool against the request, 10,000 vectors
// of 768 dimensions in a few milliseconds.
func Dot(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		a8, b8 := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += a8[0] * b8[0]
		s1 += a8[1] * b8[1]
		s2 += a8[2] * b8[2]
		s3 += a8[3] * b8[3]
		s4 += a8[4] * b8[4]
		s5 += a8[5] * b8[5]
		s6 += a8[6] * b8[6]
		s7 += a8[7] * b8[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return float64(((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)))
}

// Scored is an item's number in the caller's list and its score.
type Scored struct {
	N     int
	Score float64
}

// byScore orders items best first, the lower number first on a tie.
func byScore(a, b Scored) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return a.N - b.N
}

// rrfK is reciprocal rank fusion's constant: an item ranked r-th (from
// 1) in a list adds 1/(rrfK+r), as Cormack, Clarke and Büttcher (2009) set it.
const rrfK = 60

// Fuse ranks items by the sum of their reciprocal ranks in the lists
// given, each best first; equal sums keep the lower number first.
func Fuse(lists ...[]int) []Scored {
	score := map[int]float64{}
	for _, l := range lists {
		for r, n := range l {
			score[n] += 1 / float64(rrfK+r+1)
		}
	}
	out := make([]Scored, 0, len(score))
	for n, s := range score {
		out = append(out, Scored{n, s})
	}
	slices.SortFunc(out, byScore)
	return out
}

// Rank orders n items by the cosine of their vectors (vec(i), nil for an
// item left out) to q, best first, and returns the numbers of the first
// limit. It keeps the best limit as it goes, in a heap whose top is the
// worst of them, not every score.
func Rank(q []float32, n int, vec func(i int) []float32, limit int) []int {
	if limit <= 0 {
		return nil
	}
	best := make([]Scored, 0, limit)
	for i := range n {
		v := vec(i)
		if v == nil {
			continue
		}
		s := Scored{i, Dot(q, v)}
		switch {
		case len(best) < limit:
			best = append(best, s)
			up(best, len(best)-1)
		case byScore(s, best[0]) < 0: // better than the worst kept
			best[0] = s
			down(best, 0)
		}
	}
	slices.SortFunc(best, byScore)
	out := make([]int, len(best))
	for i, s := range best {
		out[i] = s.N
	}
	return out
}

// up and down keep h a heap whose top is its worst item (byScore).
func up(h []Scored, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if byScore(h[i], h[p]) <= 0 {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func down(h []Scored, i int) {
	for {
		w := i
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(h) && byScore(h[c], h[w]) > 0 {
				w = c
			}
		}
		if w == i {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}
