// Package slack is the "slack" connector: channels, their history and
// threads, unreads, search, users and DMs, posts, replies, reactions,
// files, topics and scheduled messages, on the Slack Web API through
// github.com/slack-go/slack, with a bot token or the person's own user
// token (the user_token credential, or a per-user connection, which
// supplies it: the connector then acts as the person).
//
// It is built on connectors/saas: every call is one Slack request (never
// slack-go's looping helpers, which wait out Retry-After until the context
// ends), retried a bounded number of times; lists page with signed cursors;
// channels and messages are named by signed refs or by Slack's own ids,
// names and permalinks; and every write is made at most once per
// idempotency key: an attempt whose answer was lost looks for what it
// made (the same text by the token's own account since the first attempt;
// the key's marker in the message's metadata when markers are on) before
// sending again.
package slack

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/slack/webapi"
	"github.com/legate-mcp/legate/connectors/slack/workspace"
)

// Config is a slack instance's configuration.
type Config struct {
	// APIURL is the Web API's base URL.
	APIURL string `yaml:"api_url" default:"https://slack.com/api/" desc:"Base URL of the Slack Web API, ending in /api/ (https://slack-gov.com/api/ for GovSlack)"`
	// AllowPrivateNetworks lets api_url be a loopback or private address.
	AllowPrivateNetworks bool `yaml:"allow_private_networks" default:"false" desc:"Allow api_url on loopback, private or link-local addresses (a test server or an internal proxy); refused by default"`
	// Timeout bounds one request.
	Timeout legate.Duration `yaml:"timeout" default:"15s" desc:"Time limit of one request to Slack; a request over it is retried, a write only after checking that it did not happen"`
	// MaxAttempts bounds the requests of one call.
	MaxAttempts int `yaml:"max_attempts" default:"3" desc:"Attempts per call, the first included (1 to 10); retried on rate limits (honouring Retry-After up to max_retry_wait), 5xx and network errors"`
	// RetryBackoff is the first wait between attempts.
	RetryBackoff legate.Duration `yaml:"retry_backoff" default:"500ms" desc:"First wait before a retry when Slack gives no Retry-After; it doubles per attempt, with jitter"`
	// MaxRetryWait is the longest Retry-After waited.
	MaxRetryWait legate.Duration `yaml:"max_retry_wait" default:"10s" desc:"Longest wait between attempts; a rate limit asking for more fails the call with RATE_LIMITED and the wait"`
	// RateLimit bounds the requests the instance sends.
	RateLimit httpkit.RateLimit `yaml:"rate_limit" desc:"Requests per second the instance sends at most: per_second (0, the default, for no limit) and burst" example:"{per_second: 1, burst: 5}"`
	// IncludePrivate lists and reads private channels too.
	IncludePrivate bool `yaml:"include_private" default:"false" desc:"List private channels the bot is in as well as public ones (needs the groups:read and groups:history scopes)"`
	// Toolsets selects the groups of tools offered.
	Toolsets []string "yaml:\"toolsets\" desc:\"Groups of tools the instance offers: names from the list below, `default` for the type's defaults, `all` for every tool; empty for the defaults: channels (default), messages (default), search (default), users (default), admin, files\""
	// ReadOnly offers only the tools that read.
	ReadOnly bool `yaml:"read_only" default:"false" desc:"Offer only the tools that read"`
	// Markers leaves each write's marker in the message's metadata.
	Markers bool `yaml:"markers" default:"false" desc:"Put each post's operation marker in its message metadata (event_type legate_operation), so that a retry after a lost answer finds it by marker; off, nothing of Legate's is left in Slack and a retry finds the post by its text, author and time"`
	// MaxFileBytes bounds the content read_file returns.
	MaxFileBytes int `yaml:"max_file_bytes" default:"262144" desc:"Most bytes of a file's text read_file returns (1 KiB to 10 MiB); the rest is cut and the result says so"`
}

// Limits of the configuration and of the tools.
const (
	// The page sizes of list_channels and read_history.
	DefaultChannels, MaxChannels = 100, 1000
	DefaultMessages, MaxMessages = 50, 200
	// MaxTextBytes bounds the text of a post.
	MaxTextBytes = 40000
	// MaxUploadBytes bounds the content of an upload.
	MaxUploadBytes = 10 << 20
)

// The credentials: the bot's token, and the person's.
const (
	credBotToken  = "bot_token"
	credUserToken = "user_token"
)

// toolsets are the type's groups of tools.
var toolsets = []connectors.Toolset{
	{Name: "channels", Description: "list channels, read history, threads and DMs, unreads", Default: true},
	{Name: "messages", Description: "post, reply, react, schedule messages", Default: true},
	{Name: "search", Description: "search messages (needs a user token)", Default: true},
	{Name: "users", Description: "list and look up users, open DMs", Default: true},
	{Name: "admin", Description: "set a channel's topic"},
	{Name: "files", Description: "upload files, read their text and metadata"},
}

func init() {
	connectors.Register(connectors.TypeOf(connectors.Info{
		Name:        "slack",
		Description: "Slack workspace: channels, history, threads, unreads, search, users and DMs, posts, replies, reactions, files, topics and scheduled messages, as the bot or as the person",
		Credentials: []connectors.Credential{
			{Name: credBotToken, Description: "Bot user OAuth token (xoxb-...) of the Slack app installed in the workspace; needed unless user_token is set or the instance is per-user"},
			{Name: credUserToken, Description: "User OAuth token (xoxp-...) of a person: every call then acts as that person, and search_messages works; a per-user connection supplies it for each caller"},
			{Name: "webhook_secret", Description: "Signing secret of the Slack app whose Events API, slash commands or interactivity point at /hooks/<instance>: set, the instance receives them (checked against X-Slack-Signature) and offers events_list"},
		},
	}, New))
}

// Connector is one slack instance.
type Connector struct {
	*base
	all   []connectors.Tool // the catalog
	tools []connectors.Tool // the selection
	// selErr is the config's toolsets error, reported by Validate.
	selErr error
}

// base is what every tool works with: the config, the kit, the guarded
// HTTP client and the workspace's directory.
type base struct {
	cfg  Config
	kit  *saas.Kit
	http *http.Client
	dir  *workspace.Directory
}

// New builds an instance from its decoded config; Validate reports an
// invalid one.
func New(inst connectors.Instance, cfg *Config) (connectors.Connector, error) {
	c := &Connector{base: &base{cfg: *cfg}}
	opts := cfg.retries().Options("slack", credBotToken)
	opts.Markers = cfg.Markers
	c.kit = saas.New(inst, opts)
	c.http = netguard.NewClient(netguard.Options{AllowPrivate: cfg.AllowPrivateNetworks, Timeout: time.Duration(cfg.Timeout) + time.Second, MaxRedirects: -1})
	c.dir = workspace.New()
	c.all = c.newTools()
	c.tools, c.selErr = connectors.SelectTools("slack", toolsets, cfg.Toolsets, cfg.ReadOnly, c.all)
	return c, nil
}

// Validate checks the configuration without I/O.
func (c *Connector) Validate() error {
	u, errs := saas.CheckURL("api_url", c.cfg.APIURL, c.cfg.AllowPrivateNetworks)
	if u != nil && !strings.HasSuffix(u.Path, "/") {
		errs = append(errs, legate.Invalid("api_url", "must end with /, got %q", c.cfg.APIURL))
	}
	errs = append(errs, c.cfg.retries().Validate()...)
	if c.selErr != nil {
		errs = append(errs, c.selErr)
	}
	if c.cfg.MaxFileBytes < 1<<10 || c.cfg.MaxFileBytes > 10<<20 {
		errs = append(errs, legate.Invalid("max_file_bytes", "must be between 1024 and 10485760, got %d", c.cfg.MaxFileBytes))
	}
	return errors.Join(errs...)
}

// Tools lists the instance's tools: those of the toolsets its config
// selects.
func (c *Connector) Tools() []connectors.Tool { return c.tools }

// ToolCatalog lists every tool of the type, whatever the config selects.
func (c *Connector) ToolCatalog() []connectors.Tool { return c.all }

// Test calls auth.test and compares the scopes the token has (its
// X-OAuth-Scopes header) with those the tools need; it reports both
// through connectors.Reportf and fails when a scope is missing.
func (c *Connector) Test(ctx context.Context, creds connectors.Credentials) error {
	call := asCaller(&connectors.Call{Tool: "test", Credentials: creds})
	var auth *slack.AuthTestResponse
	err := c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		var err error
		auth, err = c.client(token).AuthTestContext(ctx)
		return mapError(ctx, err)
	})
	if err != nil {
		connectors.Reportf(ctx, "auth.test: %v", err)
		return err
	}
	connectors.Reportf(ctx, "auth.test: ok, user %s (%s) on team %s (%s)", auth.User, auth.UserID, auth.Team, auth.TeamID)
	header := auth.Header.Get("X-OAuth-Scopes")
	needed := c.neededScopes()
	if header == "" {
		connectors.Reportf(ctx, "scopes: Slack did not say which scopes the token has; the tools need %s", strings.Join(scopeNames(needed), ", "))
		return nil
	}
	granted := map[string]bool{}
	for _, s := range strings.Split(header, ",") {
		granted[strings.TrimSpace(s)] = true
	}
	connectors.Reportf(ctx, "scopes granted: %s", strings.Join(sortedKeys(granted), ", "))
	var missing []string
	for _, n := range needed {
		state := "ok"
		if !granted[n.scope] {
			state = "MISSING"
			missing = append(missing, n.scope)
		}
		connectors.Reportf(ctx, "scope %-16s %-7s needed by %s", n.scope, state, strings.Join(n.tools, ", "))
	}
	connectors.ReportScopes(ctx, sortedKeys(granted), missing)
	if len(missing) > 0 {
		return legate.Errorf(legate.CodePermissionDenied, "slack: the token lacks the scopes %s; add them to the Slack app and reinstall it", strings.Join(missing, ", "))
	}
	return nil
}

// client is a Slack API client with token, on the instance's guarded
// HTTP client, with slack-go's own retries off: the kit retries.
func (c *base) client(token string) *slack.Client {
	return slack.New(token, slack.OptionAPIURL(c.cfg.APIURL), slack.OptionHTTPClient(c.http))
}

// reads is the Web API's reads of pages with token (package webapi).
func (c *base) reads(token string) webapi.Reads { return webapi.New(c.http, c.cfg.APIURL, token) }

// AdapterVersion is the version of the slack connector's own code.
const AdapterVersion = "1.0.0"

// Describe says what the instance speaks (Slack's Web API, which has no
// version) and the scopes its tools need.
func (c *Connector) Describe() connectors.Description {
	return connectors.Description{AdapterVersion: AdapterVersion, APIVersion: "Web API", Scopes: scopeNames(c.neededScopes())}
}

var (
	_ connectors.Connector   = (*Connector)(nil)
	_ connectors.ToolCatalog = (*Connector)(nil)
	_ connectors.Describer   = (*Connector)(nil)
)

// retries are the config's retry settings.
func (c Config) retries() saas.Retries {
	return saas.Retries{Timeout: time.Duration(c.Timeout), MaxAttempts: c.MaxAttempts, RetryBackoff: time.Duration(c.RetryBackoff),
		MaxRetryWait: time.Duration(c.MaxRetryWait), RateLimit: c.RateLimit}
}
