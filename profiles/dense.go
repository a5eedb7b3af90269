package profiles

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors/embeddings"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/vault"
)

// Dense ranks tools by the cosine of their embeddings to a request's, for
// legate.search_tools to fuse with BM25 by reciprocal rank (search:
// embeddings_url). Every tool of the catalog is embedded in the
// background when the catalog changes (Warm), a tool once while its
// definition is unchanged, and its vector kept in the store for the
// replicas and the next start; a search embeds its request alone, or
// finds it among the last ones asked. Until every tool of a view is embedded,
// or while the endpoint fails, searches rank by BM25 alone and say why.
type Dense struct {
	client  *embeddings.Client
	key     func(context.Context) (string, error) // the endpoint's bearer key, "" for none
	batch   int
	timeout time.Duration        // of one search's embedding
	store   store.EmbeddingStore // keeps the vectors for the replicas and restarts; nil: none
	log     *slog.Logger

	mu      sync.RWMutex
	ctx     context.Context      // the warming's, from Start; nil before
	vecs    map[string][]float32 // by entry Hash
	next    *catalog.Catalog     // the catalog to warm next
	running bool                 // a warming goroutine runs
	queries *lru.Cache[string, []float32]

	failures *prometheus.CounterVec // by stage: catalog, request
}

// denseCandidates is how many of each ranking are fused.
const denseCandidates = 50

// maxToolText bounds the characters of a tool embedded.
const maxToolText = 2000

// DenseFor is the ranker of the search: section, nil without an
// embeddings_url; res resolves its embeddings_key, and st (nil: none)
// keeps the vectors embedded. It embeds nothing before Start.
func DenseFor(cfg config.Search, res *vault.Resolver, st store.EmbeddingStore, log *slog.Logger) *Dense {
	if cfg.EmbeddingsURL == "" {
		return nil
	}
	queries, _ := lru.New[string, []float32](1024)
	d := &Dense{client: embeddings.New(embeddings.Options{URL: cfg.EmbeddingsURL, Model: cfg.EmbeddingsModel, Name: "search"}),
		batch: max(cfg.EmbeddingsBatch, 1), timeout: cmp.Or(time.Duration(cfg.Timeout), 5*time.Second), log: log,
		vecs: map[string][]float32{}, queries: queries, store: st,
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "legate_search_embedding_failures_total",
			Help: "Embeddings requests of the tool search that failed, by stage: catalog (its tools, retried after 30 s) or request (a search's, ranked by BM25 alone)."},
			[]string{"stage"})}
	d.failures.WithLabelValues("catalog")
	d.failures.WithLabelValues("request")
	d.key = func(context.Context) (string, error) { return "", nil }
	if ref := cfg.EmbeddingsKey; ref != nil {
		d.key = func(ctx context.Context) (string, error) { return res.Resolve(ctx, "", *ref) }
	}
	return d
}

// Start lets Warm embed, until ctx ends, beginning with the catalog last
// given to Warm (a gateway made for one CLI command embeds nothing), and
// registers the ranker's series with register. A nil Dense does nothing,
// here and in Warm.
func (d *Dense) Start(ctx context.Context, register func(...prometheus.Collector)) {
	if d == nil {
		return
	}
	register(d.failures, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "legate_search_embedded_tools",
		Help: "Tools of the catalog whose embeddings the tool search holds (search.embeddings_url)."}, func() float64 {
		d.mu.RLock()
		defer d.mu.RUnlock()
		return float64(len(d.vecs))
	}))
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ctx = ctx
	d.kick()
}

// kick starts the warming goroutine when there is work and none runs;
// d.mu is held.
func (d *Dense) kick() {
	if d.ctx != nil && d.next != nil && !d.running {
		d.running = true
		go d.run(d.ctx)
	}
}

// toolText is what is embedded of a tool: its own name (without its
// source's prefix), title and description.
func toolText(e *catalog.Entry) string {
	name := e.Canonical[strings.LastIndexByte(e.Canonical, '.')+1:]
	s := strings.ReplaceAll(name, "_", " ")
	if e.Tool.Title != "" {
		s += "\n" + e.Tool.Title
	}
	s += "\n" + e.Tool.Description
	if len(s) > maxToolText {
		s = s[:maxToolText]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}

// Warm embeds, in the background, every tool of cat not embedded yet,
// and then forgets the vectors of tools cat no longer holds. A newer
// catalog given while one is warmed is warmed next; one failing is tried
// again after embeddings.Pause.
func (d *Dense) Warm(cat *catalog.Catalog) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next = cat
	d.kick()
}

func (d *Dense) run(ctx context.Context) {
	defer d.client.CloseIdleConnections()
	for {
		d.mu.Lock()
		cat := d.next
		d.next = nil
		if cat == nil || ctx.Err() != nil {
			d.running = false
			d.mu.Unlock()
			return
		}
		d.mu.Unlock()
		err := d.embedAll(ctx, cat)
		if err == nil || ctx.Err() != nil {
			continue
		}
		d.client.NoteFailure(err.Error())
		d.failures.WithLabelValues("catalog").Inc()
		d.log.Warn("tool search: embedding the catalog's tools failed; searches rank by BM25 alone until it succeeds",
			"model", d.client.Model(), "retry_in", embeddings.Pause, "error", err)
		select {
		case <-ctx.Done():
		case <-time.After(embeddings.Pause):
		}
		d.mu.Lock()
		if d.next == nil {
			d.next = cat
		}
		d.mu.Unlock()
	}
}

// embedAll embeds the tools of cat that have no vector, in batches.
func (d *Dense) embedAll(ctx context.Context, cat *catalog.Catalog) error {
	var todo []*catalog.Entry
	live := map[string]bool{}
	d.mu.RLock()
	for _, e := range cat.Entries() {
		if e.Hash == "" || live[e.Hash] || unsearched(e) {
			continue
		}
		live[e.Hash] = true
		if d.vecs[e.Hash] == nil {
			todo = append(todo, e)
		}
	}
	d.mu.RUnlock()
	start := time.Now()
	if todo = d.fromStore(ctx, todo, start); len(todo) > 0 {
		key, err := d.key(ctx)
		if err != nil {
			return fmt.Errorf("search.embeddings_key: %w", err)
		}
		for i := 0; i < len(todo); i += d.batch {
			part := todo[i:min(i+d.batch, len(todo))]
			inputs := make([]string, len(part))
			for j, e := range part {
				inputs[j] = toolText(e)
			}
			vs, err := d.client.Embed(ctx, key, inputs)
			if err != nil {
				return fmt.Errorf("%w (%d of %d tools embedded)", err, i, len(todo))
			}
			kept := make(map[string][]float32, len(part))
			d.mu.Lock()
			for j, e := range part {
				d.vecs[e.Hash], kept[d.client.Key(inputs[j])] = vs[j], vs[j]
			}
			d.mu.Unlock()
			if d.store != nil {
				if err := d.store.Put(ctx, kept, time.Now()); err != nil { // embedded again at the next start, not lost
					d.log.Warn("tool search: keeping embeddings in the store", "error", err)
				}
			}
		}
		d.log.Info("tool search: tools embedded", "tools", len(todo), "model", d.client.Model(), "took", time.Since(start).Round(time.Millisecond))
	}
	if d.store != nil {
		if _, err := d.store.Prune(ctx, start.Add(-storedFor)); err != nil {
			d.log.Warn("tool search: pruning the store's embeddings", "error", err)
		}
	}
	d.mu.Lock()
	if d.next == nil { // the latest catalog: what it no longer holds goes
		for h := range d.vecs {
			if !live[h] {
				delete(d.vecs, h)
			}
		}
	}
	d.mu.Unlock()
	return nil
}

// storedFor is how long the store keeps an embedding no replica has used.
const storedFor = 30 * 24 * time.Hour

// fromStore takes the vectors of todo's tools that the store keeps (as
// another replica, or this one before a restart, embedded them), noting
// them used at now, and returns the tools still to embed.
func (d *Dense) fromStore(ctx context.Context, todo []*catalog.Entry, now time.Time) []*catalog.Entry {
	if d.store == nil || len(todo) == 0 {
		return todo
	}
	keys := make([]string, len(todo))
	for i, e := range todo {
		keys[i] = d.client.Key(toolText(e))
	}
	kept, err := d.store.Get(ctx, keys, now)
	if err != nil {
		d.log.Warn("tool search: reading embeddings from the store; asking the endpoint", "error", err)
		return todo
	}
	var rest []*catalog.Entry
	d.mu.Lock()
	for i, e := range todo {
		if v := kept[keys[i]]; v != nil {
			d.vecs[e.Hash] = v
		} else {
			rest = append(rest, e)
		}
	}
	d.mu.Unlock()
	if n := len(todo) - len(rest); n > 0 {
		d.log.Info("tool search: embeddings read from the store", "tools", n)
	}
	return rest
}

// unsearched reports the entries no search is for (as catalog.Index
// leaves them out), which are not embedded.
func unsearched(e *catalog.Entry) bool { return e.Canonical == ResultTool || e.Canonical == SearchTool }

// rank is the dense ranking of view's tools that keep keeps for query:
// their positions in view.Entries(), best first. It returns why there is
// none instead: the endpoint paused after a failure, a tool of the view
// not embedded yet, the request's embedding failing.
func (d *Dense) rank(ctx context.Context, view *catalog.Catalog, query string, keep func(int) bool) ([]int, string) {
	if why := d.client.Paused(time.Now()); why != "" {
		return nil, why
	}
	entries := view.Entries()
	vecs := make([][]float32, len(entries))
	missing := 0
	d.mu.RLock()
	for i, e := range entries {
		if e.Hash == "" || unsearched(e) || !keep(i) {
			continue
		}
		if vecs[i] = d.vecs[e.Hash]; vecs[i] == nil {
			missing++
		}
	}
	d.mu.RUnlock()
	if missing > 0 {
		return nil, fmt.Sprintf("the tools are being embedded (%d of this view's not yet)", missing)
	}
	q, ok := d.queries.Get(query)
	if !ok {
		key, err := d.key(ctx)
		if err != nil {
			return nil, "search.embeddings_key: " + err.Error()
		}
		qctx, cancel := context.WithTimeout(ctx, d.timeout)
		vs, err := d.client.Embed(qctx, key, []string{query})
		cancel()
		if err != nil {
			if ctx.Err() == nil { // the endpoint's failure or slowness, not the caller's end
				d.client.NoteFailure(err.Error())
				d.failures.WithLabelValues("request").Inc()
			}
			return nil, err.Error()
		}
		q = vs[0]
		d.queries.Add(query, q)
	}
	return embeddings.Rank(q, len(vecs), func(i int) []float32 { return vecs[i] }, denseCandidates), ""
}
