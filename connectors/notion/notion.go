// Package notion is the "notion" connector: it finds, reads and writes
// the pages of a Notion workspace, queries its databases, and reads and
// adds comments, with an integration token, on Notion API 2025-09-03
// (data sources).
//
// It is built on connectors/saas and sends every request itself, on the
// instance's HTTP client, whose transport points it at the configured
// base_url and notes the status and Retry-After of a failed answer; one
// error mapping makes every failure canonical, and the kit retries.
// jomei/notionapi gives the page and property types (it knows neither
// data sources nor API 2025-09-03, and retries a 429 by sending its
// already-read body again, so it sends nothing). Lists page with signed
// cursors, objects are named by signed refs or by Notion's own ids and
// URLs, and every write is done at most once per idempotency key: an
// attempt whose answer was lost reads back what it would have written
// (see find.go) before writing again.
package notion

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/connectors/notion/internal/readback"
	"github.com/legate-mcp/legate/connectors/notion/internal/rest"
	"github.com/legate-mcp/legate/connectors/saas"
)

// Config is a notion instance's configuration.
type Config struct {
	// BaseURL is where the API is served; requests go to its /v1/.
	BaseURL string `yaml:"base_url" default:"https://api.notion.com" desc:"Base URL of the Notion API; requests go to its /v1/ (a path here is kept as a prefix, for a proxy)"`
	// NotionVersion is sent as the Notion-Version header.
	NotionVersion string `yaml:"notion_version" default:"2025-09-03" desc:"The Notion API version sent as Notion-Version (YYYY-MM-DD), 2025-09-03 or later: the tools read databases as data sources, which earlier versions do not have"`
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
	// Toolsets selects the groups of tools offered.
	Toolsets []string "yaml:\"toolsets\" desc:\"Groups of tools the instance offers: names from the list below, `default` for the type's defaults, `all` for every tool; empty for the defaults: pages, databases and comments (the defaults), users, lifecycle\""
	// ReadOnly offers only the tools that read.
	ReadOnly bool `yaml:"read_only" default:"false" desc:"Offer only the tools that read"`
	// Markers leaves a visible marker in what a write creates.
	Markers bool `yaml:"markers" default:"false" desc:"Leave a gray paragraph legate-operation: lg1-… after what create_page and the appends write, and a gray run ending a comment, to find a write whose answer was lost by its marker; off, it is found by its title, content, time and author (the integration's bot)"`
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
)

const credToken = "token"

func init() {
	connectors.Register(connectors.TypeOf(connectors.Info{
		Name:        "notion",
		Description: "Notion pages, databases (data sources) and comments: find, read as Markdown, create and add to pages, set properties, query, comment, with an integration token",
		Credentials: []connectors.Credential{
			{Name: credToken, Description: "Internal integration secret (ntn_… or secret_…) or an OAuth access token, with the capabilities Read content, Insert content, Update content (update_page, the lifecycle tools), Read comments and Insert comments (the comments tools) and Read user information (the users tools), and the pages shared with the integration", Required: true},
			{Name: "webhook_verification_token", Description: "Verification token of the integration's webhook subscription pointed at /hooks/<instance>: set, the instance receives its events (checked against X-Notion-Signature) and offers events_list"},
		},
	}, New))
}

// Connector is one notion instance.
type Connector struct {
	*base
	cfg      Config
	social   *social
	all      []connectors.Tool // every tool of the type
	tools    []connectors.Tool // those the config selects
	toolsErr error             // a toolsets that names none
}

// New builds an instance from its decoded config; Validate reports an
// invalid one.
func New(inst connectors.Instance, cfg *Config) (connectors.Connector, error) {
	c := &Connector{base: &base{}, cfg: *cfg}
	opts := cfg.retries().Options("notion", credToken)
	opts.Markers = cfg.Markers
	c.kit = saas.New(inst, opts)
	hc := netguard.NewClient(netguard.Options{AllowPrivate: cfg.AllowPrivateNetworks, Timeout: time.Duration(cfg.Timeout) + time.Second, MaxRedirects: -1})
	// An unparsable base_url leaves base nil, and every request refused:
	// Validate reports it, and nothing goes to api.notion.com instead.
	base, _ := url.Parse(cfg.BaseURL)
	hc.Transport = &rest.Transport{Base: base, Next: hc.Transport}
	c.api = &rest.Client{HTTP: hc, Version: cfg.NotionVersion}
	c.find = &readback.Finder{API: c.api, Markers: cfg.Markers}
	c.social = &social{c.base}
	c.all = c.newTools()
	c.tools, c.toolsErr = connectors.SelectTools("notion", Toolsets, cfg.Toolsets, cfg.ReadOnly, c.all)
	return c, nil
}

// base is what every tool of an instance works with: the kit (tokens,
// refs, retries, writes made once), the REST client and the finder of a
// write whose answer was lost.
type base struct {
	kit  *saas.Kit
	api  *rest.Client
	find *readback.Finder
}

var versionPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// Validate checks the configuration without I/O.
func (c *Connector) Validate() error {
	_, errs := saas.CheckURL("base_url", c.cfg.BaseURL, c.cfg.AllowPrivateNetworks)
	switch {
	case !versionPattern.MatchString(c.cfg.NotionVersion):
		errs = append(errs, legate.Invalid("notion_version", "must be a date, YYYY-MM-DD, got %q", c.cfg.NotionVersion))
	case c.cfg.NotionVersion < MinVersion:
		errs = append(errs, legate.Invalid("notion_version", "must be %s or later (the tools read databases as data sources), got %s", MinVersion, c.cfg.NotionVersion))
	}
	if c.toolsErr != nil {
		errs = append(errs, c.toolsErr)
	}
	errs = append(errs, c.cfg.retries().Validate()...)
	return errors.Join(errs...)
}

// MinVersion is the oldest Notion-Version the connector speaks: the
// first with data sources.
const MinVersion = "2025-09-03"

// Tools lists the instance's tools: those of the toolsets its config
// selects.
func (c *Connector) Tools() []connectors.Tool { return c.tools }

// ToolCatalog lists every tool of the type, each with its toolset.
func (c *Connector) ToolCatalog() []connectors.Tool { return c.all }

// Test reads the integration's bot user (GET /v1/users/me) and runs a
// one-item search to see whether anything is shared with it; it reports
// both through connectors.Reportf. Notion does not tell an integration's
// capabilities: the report names those the tools need.
func (c *Connector) Test(ctx context.Context, creds connectors.Credentials) error {
	call := &connectors.Call{Tool: "test", Credentials: creds}
	connectors.Reportf(ctx, "base_url %s, Notion-Version %s", c.cfg.BaseURL, c.cfg.NotionVersion)
	var me rest.User
	err := c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		return c.api.Send(ctx, token, rest.Request{Method: http.MethodGet, Path: "users/me"}, &me)
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
	var found rest.List[rest.Page]
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		body := map[string]any{"page_size": 1, "filter": map[string]any{"property": "object", "value": "page"}}
		return c.api.Send(ctx, token, rest.Request{Method: http.MethodPost, Path: "search", Body: body}, &found)
	})
	switch {
	case err != nil:
		connectors.Reportf(ctx, "POST /v1/search: %v", err)
		return err
	case len(found.Results) == 0:
		connectors.Reportf(ctx, "POST /v1/search: ok, but no page is shared with the integration: share pages or databases with it (… menu, Connections)")
	default:
		connectors.Reportf(ctx, "POST /v1/search: ok, pages are shared with the integration")
	}
	connectors.Reportf(ctx, "capabilities: Notion does not report them; the read tools need Read content, create_page and the appends Insert content, update_page and the lifecycle tools Update content, the comments tools Read and Insert comments, the users tools Read user information")
	return nil
}

// AdapterVersion is the version of the notion connector's own code.
const AdapterVersion = "1.0.0"

// Describe says what the instance speaks: the Notion-Version it sends.
// Notion has no scopes: an integration's capabilities are not told.
func (c *Connector) Describe() connectors.Description {
	return connectors.Description{AdapterVersion: AdapterVersion, APIVersion: c.cfg.NotionVersion}
}

var _ connectors.Connector = (*Connector)(nil)
var _ connectors.Describer = (*Connector)(nil)

// retries are the config's retry settings.
func (c Config) retries() saas.Retries {
	return saas.Retries{Timeout: time.Duration(c.Timeout), MaxAttempts: c.MaxAttempts, RetryBackoff: time.Duration(c.RetryBackoff),
		MaxRetryWait: time.Duration(c.MaxRetryWait), RateLimit: c.RateLimit}
}
