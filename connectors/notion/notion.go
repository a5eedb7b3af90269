// Package notion is the "notion" connector: it searches a Notion
// workspace, queries its databases, creates pages and appends blocks, with
// an integration token, through github.com/jomei/notionapi.
//
// It is built on connectors/saas. notionapi has no base-URL option and
// retries a 429 by sending its already-read body again, so the connector
// gives it an HTTP client whose transport points every request at the
// configured base_url and notes the status and Retry-After of a failed
// answer (which notionapi drops), builds it with WithRetry(1) so that it
// returns at the first 429, and lets the kit retry, each attempt with a
// new request and body. Lists page with signed cursors, objects are named
// by signed refs, and a page or a block is written at most once per
// idempotency key: the write ends with a marker block
// ("legate-operation: lg1-…"), and an attempt whose answer was lost looks
// for it before writing again.
package notion

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/jomei/notionapi"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/connectors/saas"
)

// Config is a notion instance's configuration.
type Config struct {
	// BaseURL is where the API is served; requests go to its /v1/.
	BaseURL string `yaml:"base_url" default:"https://api.notion.com" desc:"Base URL of the Notion API; requests go to its /v1/ (a path here is kept as a prefix, for a proxy)"`
	// NotionVersion is sent as the Notion-Version header.
	NotionVersion string `yaml:"notion_version" default:"2022-06-28" desc:"The Notion API version sent as Notion-Version (YYYY-MM-DD); the results are read as this version gives them"`
	// AllowPrivateNetworks lets base_url be a loopback or private address.
	AllowPrivateNetworks bool `yaml:"allow_private_networks" default:"false" desc:"Allow base_url on loopback, private or link-local addresses (a proxy on an internal network, a test server); refused by default"`
	// Timeout bounds one request.
	Timeout legate.Duration `yaml:"timeout" default:"15s" desc:"Time limit of one request to Notion; a request over it is retried, a write only after checking that it did not happen"`
	// MaxAttempts bounds the requests of one call.
	MaxAttempts int `yaml:"max_attempts" default:"3" desc:"Attempts per call, the first included (1 to 10); retried on rate limits (honouring Retry-After up to max_retry_wait), 5xx and network errors"`
	// RetryBackoff is the first wait between attempts.
	RetryBackoff legate.Duration `yaml:"retry_backoff" default:"500ms" desc:"First wait before a retry when Notion gives no Retry-After; it doubles per attempt, with jitter"`
	// MaxRetryWait is the longest wait waited.
	MaxRetryWait legate.Duration `yaml:"max_retry_wait" default:"10s" desc:"Longest wait between attempts; a rate limit asking for more fails the call with RATE_LIMITED and the wait"`
	// RateLimit bounds the requests the instance sends.
	RateLimit httpkit.RateLimit `yaml:"rate_limit" desc:"Requests per second the instance sends at most: per_second (0, the default, for no limit) and burst; Notion allows an integration about 3 per second on average" example:"{per_second: 3, burst: 5}"`
}

// Limits of the configuration and of the tools.
const (
	// The page size of search and query_database.
	DefaultPage, MaxPage = 20, 100
	// MaxTextRunes bounds the text of a block or of a page's content;
	// Notion's own limit is 2000 characters per rich-text run and 100
	// runs per block.
	MaxTextRunes  = 20000
	MaxTitleRunes = 2000
	// MaxContentBlocks bounds the paragraphs of a created page: Notion
	// takes 100 children in one request, and the marker is one.
	MaxContentBlocks = 99
)

const credToken = "token"

func init() {
	connectors.Register(connectors.TypeOf(connectors.Info{
		Name:        "notion",
		Description: "Notion pages and databases: search, query, create pages, append blocks, with an integration token",
		Credentials: []connectors.Credential{
			{Name: credToken, Description: "Internal integration secret (ntn_… or secret_…) or an OAuth access token, with the capabilities Read content and Insert content, and the pages shared with the integration", Required: true},
		},
	}, New))
}

// Connector is one notion instance.
type Connector struct {
	cfg   Config
	kit   *saas.Kit
	http  *http.Client
	tools []connectors.Tool
}

// New builds an instance from its decoded config; Validate reports an
// invalid one.
func New(inst connectors.Instance, cfg *Config) (connectors.Connector, error) {
	c := &Connector{cfg: *cfg}
	c.kit = saas.New(inst, cfg.retries().Options("notion", credToken))
	c.http = netguard.NewClient(netguard.Options{AllowPrivate: cfg.AllowPrivateNetworks, Timeout: time.Duration(cfg.Timeout) + time.Second, MaxRedirects: -1})
	// An unparsable base_url leaves base nil, and every request refused:
	// Validate reports it, and nothing goes to api.notion.com instead.
	base, _ := url.Parse(cfg.BaseURL)
	c.http.Transport = &transport{base: base, next: c.http.Transport}
	c.tools = c.newTools()
	return c, nil
}

var versionPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// Validate checks the configuration without I/O.
func (c *Connector) Validate() error {
	_, errs := saas.CheckURL("base_url", c.cfg.BaseURL, c.cfg.AllowPrivateNetworks)
	if !versionPattern.MatchString(c.cfg.NotionVersion) {
		errs = append(errs, legate.Invalid("notion_version", "must be a date, YYYY-MM-DD, got %q", c.cfg.NotionVersion))
	}
	errs = append(errs, c.cfg.retries().Validate()...)
	return errors.Join(errs...)
}

// Tools lists the instance's tools.
func (c *Connector) Tools() []connectors.Tool { return c.tools }

// Test reads the integration's bot user (GET /v1/users/me) and runs a
// one-item search to see whether anything is shared with it; it reports
// both through connectors.Reportf. Notion does not tell an integration's
// capabilities: the report names those the tools need.
func (c *Connector) Test(ctx context.Context, creds connectors.Credentials) error {
	call := &connectors.Call{Tool: "test", Credentials: creds}
	connectors.Reportf(ctx, "base_url %s, Notion-Version %s", c.cfg.BaseURL, c.cfg.NotionVersion)
	var me *notionapi.User
	err := c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		return c.do(ctx, token, func(ctx context.Context, api *notionapi.Client) (err error) {
			me, err = api.User.Me(ctx)
			return err
		})
	})
	if err != nil {
		connectors.Reportf(ctx, "GET /v1/users/me: %v", err)
		return err
	}
	who := me.Name
	if me.Bot != nil && me.Bot.WorkspaceName != "" {
		who += " in workspace " + me.Bot.WorkspaceName
	}
	connectors.Reportf(ctx, "GET /v1/users/me: ok, %s %s (id %s)", me.Type, who, me.ID)
	var found int
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		return c.do(ctx, token, func(ctx context.Context, api *notionapi.Client) error {
			res, err := api.Search.Do(ctx, &notionapi.SearchRequest{PageSize: 1, Filter: notionapi.SearchFilter{Property: "object", Value: "page"}})
			if err == nil {
				found = len(res.Results)
			}
			return err
		})
	})
	switch {
	case err != nil:
		connectors.Reportf(ctx, "POST /v1/search: %v", err)
		return err
	case found == 0:
		connectors.Reportf(ctx, "POST /v1/search: ok, but no page is shared with the integration: share pages or databases with it (… menu, Connections)")
	default:
		connectors.Reportf(ctx, "POST /v1/search: ok, pages are shared with the integration")
	}
	connectors.Reportf(ctx, "capabilities: Notion does not report them; search and query_database need Read content, create_page and append_block need Insert content")
	return nil
}

// client is a notionapi client with token on the instance's HTTP client.
// WithRetry(1): notionapi returns at the first 429 instead of sending its
// spent body again; the kit retries.
func (c *Connector) client(token string) *notionapi.Client {
	return notionapi.NewClient(notionapi.Token(token), notionapi.WithHTTPClient(c.http),
		notionapi.WithVersion(c.cfg.NotionVersion), notionapi.WithRetry(1))
}

// do runs fn, one or more requests, with a client for token, and makes
// its error canonical. notionapi panics on some answers of an unexpected
// shape (a search result that is not an object): that is an
// ADAPTER_MAPPING_ERROR too.
func (c *Connector) do(ctx context.Context, token string, fn func(ctx context.Context, api *notionapi.Client) error) (err error) {
	ex := &exchange{}
	ctx = context.WithValue(ctx, exchangeKey{}, ex)
	defer func() {
		if r := recover(); r != nil {
			err = saas.Mapping("notion", "an answer of an unexpected shape")
		}
	}()
	if err := fn(ctx, c.client(token)); err != nil {
		return mapError(ctx, ex, err)
	}
	return nil
}

var _ connectors.Connector = (*Connector)(nil)

// retries are the config's retry settings.
func (c Config) retries() saas.Retries {
	return saas.Retries{Timeout: time.Duration(c.Timeout), MaxAttempts: c.MaxAttempts, RetryBackoff: time.Duration(c.RetryBackoff),
		MaxRetryWait: time.Duration(c.MaxRetryWait), RateLimit: c.RateLimit}
}
