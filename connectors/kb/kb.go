// Package kb is the "kb" connector: a knowledge base over the documents an
// operator points it at, for a model to search and read.
//
// It indexes folders of Markdown, text, HTML and PDF files and pages
// fetched from the URLs its config lists (through netguard), cut into
// passages that keep the path of headings above them. kb.search ranks
// passages by BM25 with the text analysis of package search (words,
// stemming, synonyms), and, when an OpenAI-compatible /v1/embeddings
// endpoint is configured, by the cosine of dense embeddings too, the two
// rankings fused by reciprocal rank. kb.read returns a document or a
// passage by the ref a search gave, a bounded page at a time.
//
// The index is searched in memory. With a store (connectors.Instance's
// Index: the gateway's), its documents, passages and embeddings are kept
// there too, and the replicas of the instance share them: the replica
// that reads a document changed writes it (one that holds it unchanged
// writes nothing), and each replica builds its index from what the store
// holds, again when the store's generation of the instance moves (looked
// at on a call, at most once a second), so that a replica that cannot see
// a folder answers from it all the same. Without a store each replica
// builds it from the same folders and URLs. Either way the documents are
// ranked in the same order, so a search ranks alike on every replica and
// a ref (the document's source and the passage's content hash, signed
// with the instance's key, which every replica derives alike) reads on
// any of them. It is built at the first call (or `legate connector
// test`), then kept current: folders are watched (fsnotify) and URLs
// fetched again every refresh_interval.
package kb

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/connectors/saas"
)

// Limits of the configuration.
const (
	MinChunkChars       = 200
	MaxChunkChars       = 20000
	MinReadChars        = 500
	MaxReadCharsLimit   = 1 << 20
	MaxDocumentLimit    = 256 << 20
	MaxDocumentsLimit   = 1000000
	MaxEmbeddingsBatch  = 2048
	MinRefreshInterval  = time.Second
	embeddingCredential = "embeddings_api_key"
)

// Config is a kb instance's configuration.
type Config struct {
	// Folders are indexed with their subfolders and watched.
	Folders []string `yaml:"folders" desc:"Absolute paths of folders whose Markdown (.md, .markdown), text (.txt), HTML (.html, .htm) and PDF (.pdf) files are indexed, subfolders included (hidden ones skipped); watched, so a file added, changed or removed is indexed again as it changes" example:"[/srv/handbook]"`
	// URLs are fetched and indexed.
	URLs []string `yaml:"urls" desc:"http or https pages fetched and indexed, as HTML, Markdown, text or PDF by their content type: these pages only, no link is followed" example:"[https://wiki.example.com/runbook.html]"`
	// RefreshInterval is how often URLs are fetched again.
	RefreshInterval legate.Duration `yaml:"refresh_interval" default:"1h" desc:"How often urls are fetched again (at least 1s); 0 fetches them only when the index is first built. A page that fails to fetch keeps its last version"`
	// AllowPrivateNetworks lets urls reach internal addresses.
	AllowPrivateNetworks bool `yaml:"allow_private_networks" default:"false" desc:"Let urls reach loopback, private, link-local (cloud metadata) and other internal addresses; refused by default to prevent server-side request forgery. The embeddings endpoint needs no such setting: its own host is allowed"`
	// Timeout bounds one fetch or one embeddings request.
	Timeout legate.Duration `yaml:"timeout" default:"30s" desc:"Time limit of one fetch of a URL and of one embeddings request"`
	// MaxDocumentBytes bounds one file or page.
	MaxDocumentBytes int `yaml:"max_document_bytes" default:"10485760" desc:"Largest file or page indexed, in bytes (at most 256 MiB); a larger one is skipped and reported"`
	// MaxDocuments bounds the documents indexed.
	MaxDocuments int `yaml:"max_documents" default:"10000" desc:"Most documents indexed; past it the rest are skipped and reported"`
	// ChunkChars is the longest passage.
	ChunkChars int `yaml:"chunk_chars" default:"1200" desc:"Longest passage, in characters (200 to 20000): a section longer than this is cut at paragraph ends, or sentence ends"`
	// MaxReadChars bounds one kb.read.
	MaxReadChars int `yaml:"max_read_chars" default:"8000" desc:"Most characters one read returns (500 to 1048576); the caller reads on from next_offset"`
	// EmbeddingsURL turns dense ranking on.
	EmbeddingsURL string `yaml:"embeddings_url" desc:"URL of an OpenAI-compatible embeddings endpoint (a local Ollama or vLLM: http://127.0.0.1:11434/v1/embeddings); set, passages are also ranked by the cosine of their embeddings, fused with BM25 by reciprocal rank. Empty: BM25 alone" example:"http://127.0.0.1:11434/v1/embeddings"`
	// EmbeddingsModel is the model the endpoint is asked for.
	EmbeddingsModel string `yaml:"embeddings_model" desc:"Model name sent to the embeddings endpoint; required with embeddings_url" example:"nomic-embed-text"`
	// EmbeddingsBatch is how many passages one request embeds.
	EmbeddingsBatch int `yaml:"embeddings_batch" default:"64" desc:"Passages sent in one embeddings request (1 to 2048)"`
}

func init() {
	connectors.Register(connectors.TypeOf(connectors.Info{
		Name:        "kb",
		Description: "A knowledge base: folders of Markdown, text, HTML and PDF and fetched pages, searched by BM25 and optional embeddings",
		Credentials: []connectors.Credential{
			{Name: embeddingCredential, Description: "Bearer key of the embeddings endpoint, for endpoints that require one"},
		},
	}, New))
}

// Connector is one kb instance.
type Connector struct {
	id     string
	cfg    Config
	kit    *saas.Kit
	fetch  *http.Client // urls
	embed  *embedder    // nil without embeddings_url
	ix     *indexer
	tools  []connectors.Tool
	closed context.CancelFunc
}

// New builds an instance from its decoded config, without I/O: the index
// is built at the first call. An invalid configuration is reported by
// Validate, not here.
func New(inst connectors.Instance, cfg *Config) (connectors.Connector, error) {
	c := &Connector{id: inst.ID, cfg: *cfg}
	c.kit = saas.New(inst, saas.Options{Provider: "kb"})
	c.fetch = netguard.NewClient(netguard.Options{
		AllowPrivate: cfg.AllowPrivateNetworks,
		Timeout:      time.Duration(cfg.Timeout),
	})
	if cfg.EmbeddingsURL != "" {
		c.embed = newEmbedder(cfg)
		if inst.Index != nil {
			c.embed.save = inst.Index.SetVectors
		}
	}
	life, cancel := context.WithCancel(context.Background())
	c.closed = cancel
	c.ix = newIndexer(life, c, inst.Index)
	c.tools = []connectors.Tool{c.searchTool(), c.readTool()}
	return c, nil
}

// Validate checks the configuration without I/O and reports every problem.
func (c *Connector) Validate() error {
	var errs []error
	if len(c.cfg.Folders) == 0 && len(c.cfg.URLs) == 0 {
		errs = append(errs, legate.Invalid("folders", "the instance indexes nothing: set folders, urls or both"))
	}
	seen := map[string]bool{}
	for i, f := range c.cfg.Folders {
		field := fmt.Sprintf("folders[%d]", i)
		switch {
		case !filepath.IsAbs(f):
			errs = append(errs, legate.Invalid(field, "must be an absolute path, got %q", f))
		case seen[filepath.Clean(f)]:
			errs = append(errs, legate.Invalid(field, "%s is listed twice", f))
		}
		seen[filepath.Clean(f)] = true
	}
	for i, raw := range c.cfg.URLs {
		field := fmt.Sprintf("urls[%d]", i)
		u, err := netguard.ParseURL(raw)
		switch {
		case err != nil:
			errs = append(errs, legate.Invalid(field, "%v", err))
		case seen[raw]:
			errs = append(errs, legate.Invalid(field, "%s is listed twice", raw))
		case !c.cfg.AllowPrivateNetworks:
			if err := netguard.CheckHost(u.Host); err != nil {
				errs = append(errs, legate.Invalid(field, "%v", err))
			}
		}
		seen[raw] = true
	}
	if d := time.Duration(c.cfg.RefreshInterval); d < 0 || d > 0 && d < MinRefreshInterval {
		errs = append(errs, legate.Invalid("refresh_interval", "must be 0 or at least %s, got %s", MinRefreshInterval, d))
	}
	if c.cfg.Timeout <= 0 {
		errs = append(errs, legate.Invalid("timeout", "must be positive"))
	}
	errs = appendRange(errs, "max_document_bytes", c.cfg.MaxDocumentBytes, 1, MaxDocumentLimit)
	errs = appendRange(errs, "max_documents", c.cfg.MaxDocuments, 1, MaxDocumentsLimit)
	errs = appendRange(errs, "chunk_chars", c.cfg.ChunkChars, MinChunkChars, MaxChunkChars)
	errs = appendRange(errs, "max_read_chars", c.cfg.MaxReadChars, MinReadChars, MaxReadCharsLimit)
	errs = appendRange(errs, "embeddings_batch", c.cfg.EmbeddingsBatch, 1, MaxEmbeddingsBatch)
	if c.cfg.EmbeddingsURL != "" {
		if _, err := netguard.ParseURL(c.cfg.EmbeddingsURL); err != nil {
			errs = append(errs, legate.Invalid("embeddings_url", "%v", err))
		}
		if c.cfg.EmbeddingsModel == "" {
			errs = append(errs, legate.Invalid("embeddings_model", "is required with embeddings_url"))
		}
	} else if c.cfg.EmbeddingsModel != "" {
		errs = append(errs, legate.Invalid("embeddings_model", "is set without embeddings_url, which it is the model of"))
	}
	return errors.Join(errs...)
}

func appendRange(errs []error, field string, v, lo, hi int) []error {
	if v < lo || v > hi {
		errs = append(errs, legate.Invalid(field, "must be between %d and %d, got %d", lo, hi, v))
	}
	return errs
}

// Test builds the index (reading every folder and fetching every URL)
// and, with embeddings configured, embeds every passage: it fails on a
// source that cannot be read or an endpoint that does not answer, and
// reports what it indexed.
func (c *Connector) Test(ctx context.Context, creds connectors.Credentials) error {
	snap, err := c.ix.ensure(ctx)
	if err != nil {
		return err
	}
	connectors.Reportf(ctx, "indexed %d documents, %d passages", len(snap.docs), len(snap.chunks))
	var errs []error
	for _, p := range snap.problems {
		errs = append(errs, fmt.Errorf("%s: %s", p.Source, p.Problem))
	}
	if len(errs) > 0 {
		return legate.Errorf(legate.CodeConfigError, "kb: %v", errors.Join(errs...))
	}
	if c.embed != nil {
		if _, err := c.embed.vectors(ctx, creds, snap); err != nil {
			return err
		}
		connectors.Reportf(ctx, "embeddings: %d passages embedded with %s", len(snap.chunks), c.cfg.EmbeddingsModel)
	}
	return nil
}

// Tools lists kb.search and kb.read.
func (c *Connector) Tools() []connectors.Tool { return c.tools }

// Close stops watching the folders and fetching the URLs.
func (c *Connector) Close() error {
	c.closed()
	c.ix.close()
	c.fetch.CloseIdleConnections()
	if c.embed != nil {
		c.embed.CloseIdleConnections()
	}
	return nil
}

// retry is how a fetch is sent again: GETs and embeddings (which change
// nothing) up to three times.
func retry(limit *httpkit.Limiter) httpkit.Retry {
	return httpkit.Retry{MaxAttempts: 3, MaxElapsed: 30 * time.Second, Limiter: limit}
}

// AdapterVersion is the version of the kb connector's own code.
const AdapterVersion = "1.0.0"

// Describe says the connector's version; it speaks no provider's
// versioned API: it reads folders and pages of its own.
func (c *Connector) Describe() connectors.Description {
	return connectors.Description{AdapterVersion: AdapterVersion}
}

var (
	_ connectors.Connector = (*Connector)(nil)
	_ connectors.Closer    = (*Connector)(nil)
	_ connectors.Describer = (*Connector)(nil)
)
