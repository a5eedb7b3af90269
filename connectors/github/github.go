// Package github is the "github" connector: it reads, lists, opens and
// comments on the issues of GitHub or GitHub Enterprise repositories with a
// token, through github.com/google/go-github.
//
// It is built on connectors/saas: each attempt uses a client of its own
// (go-github remembers a rate limit and would refuse later requests
// without sending them), lists page with signed cursors, issues are named
// by signed refs, and an issue or a comment is created at most once per
// idempotency key: its body ends with a hidden marker
// (<!-- legate-operation: ... -->), and an attempt whose answer was lost
// looks for it among the repository's issues or the issue's comments
// before creating again.
package github

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/go-github/v84/github"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/connectors/saas"
)

// Config is a github instance's configuration.
type Config struct {
	// BaseURL is the REST API's base URL.
	BaseURL string `yaml:"base_url" default:"https://api.github.com/" desc:"Base URL of the REST API: https://api.github.com/ for github.com, the server's URL for GitHub Enterprise Server (its /api/v3/ is added)"`
	// AllowPrivateNetworks lets base_url be a loopback or private address.
	AllowPrivateNetworks bool `yaml:"allow_private_networks" default:"false" desc:"Allow base_url on loopback, private or link-local addresses (GitHub Enterprise on an internal network, a test server); refused by default"`
	// Repositories, when set, are the only repositories the tools reach.
	Repositories []string `yaml:"repositories" desc:"Repositories (owner/name) the tools may reach; empty allows every repository the token can" example:"[acme/api, acme/web]"`
	// Timeout bounds one request.
	Timeout legate.Duration `yaml:"timeout" default:"15s" desc:"Time limit of one request to GitHub; a request over it is retried, a write only after checking that it did not happen"`
	// MaxAttempts bounds the requests of one call.
	MaxAttempts int `yaml:"max_attempts" default:"3" desc:"Attempts per call, the first included (1 to 10); retried on rate limits (honouring Retry-After and the reset time up to max_retry_wait), 5xx and network errors"`
	// RetryBackoff is the first wait between attempts.
	RetryBackoff legate.Duration `yaml:"retry_backoff" default:"500ms" desc:"First wait before a retry when GitHub gives no Retry-After; it doubles per attempt, with jitter"`
	// MaxRetryWait is the longest wait waited.
	MaxRetryWait legate.Duration `yaml:"max_retry_wait" default:"10s" desc:"Longest wait between attempts; a rate limit asking for more fails the call with RATE_LIMITED and the wait"`
	// RateLimit bounds the requests the instance sends.
	RateLimit httpkit.RateLimit `yaml:"rate_limit" desc:"Requests per second the instance sends at most: per_second (0, the default, for no limit) and burst" example:"{per_second: 5, burst: 10}"`
}

// Limits of the configuration and of the tools.
const (
	// The page size of list_issues.
	DefaultIssues, MaxIssues = 30, 100
	// MaxBodyBytes bounds the body of an issue or a comment (GitHub's own
	// limit is 65536 characters; the marker needs some room).
	MaxBodyBytes  = 60000
	MaxTitleBytes = 256
)

const credToken = "token"

func init() {
	connectors.Register(connectors.TypeOf(connectors.Info{
		Name:        "github",
		Description: "GitHub or GitHub Enterprise issues: read, list, open and comment, with a token",
		Credentials: []connectors.Credential{
			{Name: credToken, Description: "Personal access token (classic, with the repo or public_repo scope; or fine-grained, with Issues read and write) or an installation token", Required: true},
		},
	}, New))
}

// Connector is one github instance.
type Connector struct {
	cfg   Config
	kit   *saas.Kit
	http  *http.Client
	repos []string // lower-cased allow-list, empty for all
	tools []connectors.Tool
}

// New builds an instance from its decoded config; Validate reports an
// invalid one.
func New(inst connectors.Instance, cfg *Config) (connectors.Connector, error) {
	c := &Connector{cfg: *cfg}
	c.kit = saas.New(inst, cfg.retries().Options("github", credToken))
	c.http = netguard.NewClient(netguard.Options{AllowPrivate: cfg.AllowPrivateNetworks, Timeout: time.Duration(cfg.Timeout) + time.Second, MaxRedirects: -1})
	for _, r := range cfg.Repositories {
		c.repos = append(c.repos, strings.ToLower(r))
	}
	c.tools = c.newTools()
	return c, nil
}

var repoPattern = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$`)

// Validate checks the configuration without I/O.
func (c *Connector) Validate() error {
	_, errs := saas.CheckURL("base_url", c.cfg.BaseURL, c.cfg.AllowPrivateNetworks)
	for i, r := range c.cfg.Repositories {
		if !repoPattern.MatchString(r) {
			errs = append(errs, legate.Invalid("repositories["+itoa(i)+"]", "must be owner/name, got %q", r))
		}
	}
	errs = append(errs, c.cfg.retries().Validate()...)
	return errors.Join(errs...)
}

// Tools lists the instance's tools.
func (c *Connector) Tools() []connectors.Tool { return c.tools }

// Test reads the authenticated user (GET /user) and compares the scopes a
// classic token has (X-OAuth-Scopes) with those the tools need; it reports
// both through connectors.Reportf and fails when none suffices.
func (c *Connector) Test(ctx context.Context, creds connectors.Credentials) error {
	call := &connectors.Call{Tool: "test", Credentials: creds}
	var user *github.User
	var header http.Header
	err := c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		api, err := c.client(token)
		if err != nil {
			return err
		}
		u, resp, err := api.Users.Get(ctx, "")
		if err != nil {
			return mapError(ctx, err)
		}
		user, header = u, resp.Header
		return nil
	})
	if err != nil {
		connectors.Reportf(ctx, "GET /user: %v", err)
		return err
	}
	connectors.Reportf(ctx, "GET /user: ok, %s (id %d)", user.GetLogin(), user.GetID())
	raw, classic := header["X-Oauth-Scopes"]
	if !classic {
		connectors.Reportf(ctx, "scopes: not a classic token (fine-grained or installation): it needs Issues read and write on the repositories")
		return nil
	}
	var granted []string
	for _, s := range strings.Split(strings.Join(raw, ","), ",") {
		if s = strings.TrimSpace(s); s != "" {
			granted = append(granted, s)
		}
	}
	slices.Sort(granted)
	connectors.Reportf(ctx, "scopes granted: %s", strings.Join(granted, ", "))
	switch {
	case slices.Contains(granted, "repo"):
		connectors.Reportf(ctx, "scope repo         ok      needed by every tool on private repositories")
	case slices.Contains(granted, "public_repo"):
		connectors.Reportf(ctx, "scope public_repo  ok      public repositories only; private ones need repo")
	default:
		connectors.Reportf(ctx, "scope repo         MISSING needed by create_issue and comment_issue (public_repo for public repositories)")
		return legate.Errorf(legate.CodePermissionDenied, "github: the token has neither the repo nor the public_repo scope; create_issue and comment_issue need one")
	}
	return nil
}

// client is a GitHub client with token, new for each attempt: go-github
// remembers a rate limit per client and refuses later calls unsent.
func (c *Connector) client(token string) (*github.Client, error) {
	api, err := github.NewClient(c.http).WithAuthToken(token).WithEnterpriseURLs(c.cfg.BaseURL, c.cfg.BaseURL)
	if err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "github: base_url: %v", err)
	}
	return api, nil
}

var _ connectors.Connector = (*Connector)(nil)

// retries are the config's retry settings.
func (c Config) retries() saas.Retries {
	return saas.Retries{Timeout: time.Duration(c.Timeout), MaxAttempts: c.MaxAttempts, RetryBackoff: time.Duration(c.RetryBackoff),
		MaxRetryWait: time.Duration(c.MaxRetryWait), RateLimit: c.RateLimit}
}
