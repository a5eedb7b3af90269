// Package github is the "github" connector: issues, pull requests (files,
// diff, reviews, checks, merge), repository contents, commits, branches
// and releases, search, and Actions workflow runs of GitHub or GitHub
// Enterprise repositories, with a token, through github.com/google/go-github.
//
// Its tools fall into toolsets (issues, pull_requests, repos and search by
// default; actions on request), each of class read, write or destructive;
// read_only leaves only the reads.
//
// It is built on connectors/saas: each attempt uses a client of its own
// (go-github remembers a rate limit and would refuse later requests
// without sending them), lists page with signed cursors, issues and pull
// requests are named by signed refs or by GitHub's own ids (owner/name#12,
// their URLs), and every write happens at most once per idempotency key:
// an attempt whose answer was lost looks for what it may have done (the
// issue, comment, pull request or review with the same text by the
// token's account since the first attempt; the file with the content; the
// branch at the commit; the merged pull request; the re-run run) before
// writing again. With markers on, created text also ends with a hidden
// marker (<!-- legate-operation: ... -->) that the search matches instead.
package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/go-github/v84/github"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/github/ghcore"
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
	// Toolsets selects the groups of tools the instance offers.
	Toolsets []string "yaml:\"toolsets\" desc:\"Groups of tools the instance offers: names from the list below, `default` for the type's defaults, `all` for every tool; empty for the defaults: issues (default), pull_requests (default), repos (default), search (default), actions, notifications\" example:\"[default, actions]\""
	// ReadOnly offers only the tools that read.
	ReadOnly bool `yaml:"read_only" default:"false" desc:"Offer only the tools that read"`
	// Markers leaves a hidden marker in what a write creates.
	Markers bool `yaml:"markers" default:"false" desc:"End the body of a created issue, comment, pull request or review with a hidden HTML comment naming the operation (<!-- legate-operation: ... -->), so that a retry after a lost answer finds it by marker; off, it is found by its content, author and time"`
}

const credToken = "token"

// Toolsets are the type's groups of tools.
var Toolsets = []connectors.Toolset{
	{Name: "issues", Description: "Issues, their comments and labels", Default: true},
	{Name: "pull_requests", Description: "Pull requests: files, diff, reviews, checks; open, review, merge", Default: true},
	{Name: "repos", Description: "Contents, commits, branches and releases; edit a file, create a branch", Default: true},
	{Name: "search", Description: "Search code, issues and pull requests, repositories", Default: true},
	{Name: "actions", Description: "Workflow runs, their failed jobs and logs; re-run"},
	{Name: "notifications", Description: "The token's account's notifications"},
}

func init() {
	connectors.Register(connectors.TypeOf(connectors.Info{
		Name:        "github",
		Description: "GitHub or GitHub Enterprise: issues, pull requests, contents, commits, releases, search and Actions runs, with a token",
		Credentials: []connectors.Credential{
			{Name: credToken, Description: "Personal access token (classic, with the repo or public_repo scope, and workflow to re-run Actions; or fine-grained, with Issues, Pull requests, Contents, Commit statuses, Checks and Actions as the toolsets need) or an installation token", Required: true},
			{Name: "webhook_secret", Description: "Secret of a repository's or organization's webhook pointed at /hooks/<instance>: set, the instance receives its deliveries (checked against X-Hub-Signature-256) and offers events_list"},
		},
	}, New))
}

// Connector is one github instance.
type Connector struct {
	*ghcore.Core
	cfg     Config
	catalog []connectors.Tool
	tools   []connectors.Tool
	selErr  error
}

// New builds an instance from its decoded config; Validate reports an
// invalid one.
func New(inst connectors.Instance, cfg *Config) (connectors.Connector, error) {
	opts := cfg.retries().Options("github", credToken)
	opts.Markers = cfg.Markers
	client := netguard.NewClient(netguard.Options{AllowPrivate: cfg.AllowPrivateNetworks, Timeout: time.Duration(cfg.Timeout) + time.Second, MaxRedirects: -1})
	c := &Connector{Core: ghcore.New(saas.New(inst, opts), client, cfg.BaseURL, cfg.Repositories), cfg: *cfg}
	c.catalog = c.newTools()
	c.tools, c.selErr = connectors.SelectTools("github", Toolsets, cfg.Toolsets, cfg.ReadOnly, c.catalog)
	return c, nil
}

// Validate checks the configuration without I/O.
func (c *Connector) Validate() error {
	_, errs := saas.CheckURL("base_url", c.cfg.BaseURL, c.cfg.AllowPrivateNetworks)
	for i, r := range c.cfg.Repositories {
		if !ghcore.RepoPattern().MatchString(r) {
			errs = append(errs, legate.Invalid(fmt.Sprintf("repositories[%d]", i), "must be owner/name, got %q", r))
		}
	}
	if c.selErr != nil {
		errs = append(errs, c.selErr)
	}
	errs = append(errs, c.cfg.retries().Validate()...)
	return errors.Join(errs...)
}

// Tools lists the tools of the instance's toolsets.
func (c *Connector) Tools() []connectors.Tool { return c.tools }

// ToolCatalog lists every tool of the type, whatever the config selects.
func (c *Connector) ToolCatalog() []connectors.Tool { return c.catalog }

// scopeNeeds is what each toolset needs of a token.
var scopeNeeds = []struct{ toolset, classic, fine string }{
	{"issues", "repo (public_repo for public repositories)", "Issues: read and write"},
	{"pull_requests", "repo (public_repo for public repositories)", "Pull requests: read and write; Commit statuses and Checks: read; Contents: write to merge"},
	{"repos", "repo (public_repo for public repositories)", "Contents: read and write"},
	{"search", "repo to search private repositories", "Contents and Issues: read (metadata for repositories)"},
	{"actions", "repo and workflow to re-run", "Actions: read and write"},
	{"notifications", "notifications (or repo)", "not available to fine-grained tokens: use a classic token"},
}

// Test reads the authenticated user (GET /user) and compares the scopes a
// classic token has (X-OAuth-Scopes) with those the instance's toolsets
// need; it reports both through connectors.Reportf and fails when none
// suffices.
func (c *Connector) Test(ctx context.Context, creds connectors.Credentials) error {
	call := &connectors.Call{Tool: "test", Credentials: creds}
	var user *github.User
	var header http.Header
	err := c.Read(ctx, call, func(ctx context.Context, api *github.Client) error {
		u, resp, err := api.Users.Get(ctx, "")
		if err == nil {
			user, header = u, resp.Header
		}
		return err
	})
	if err != nil {
		connectors.Reportf(ctx, "GET /user: %v", err)
		return err
	}
	connectors.Reportf(ctx, "GET /user: ok, %s (id %d)", user.GetLogin(), user.GetID())
	sets := c.toolsets()
	raw, classic := header["X-Oauth-Scopes"]
	if !classic {
		connectors.Reportf(ctx, "scopes: not a classic token (fine-grained or installation); the API does not tell its permissions. The toolsets need:")
		for _, n := range scopeNeeds {
			if slices.Contains(sets, n.toolset) {
				connectors.Reportf(ctx, "  %-14s %s", n.toolset, n.fine)
			}
		}
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
	connectors.ReportScopes(ctx, granted, missingScopes(c.neededScopes(), granted))
	for _, n := range scopeNeeds {
		if slices.Contains(sets, n.toolset) {
			connectors.Reportf(ctx, "  %-14s needs %s", n.toolset, n.classic)
		}
	}
	switch {
	case slices.Contains(granted, "repo"):
		connectors.Reportf(ctx, "scope repo         ok      needed by every tool on private repositories")
	case slices.Contains(granted, "public_repo"):
		connectors.Reportf(ctx, "scope public_repo  ok      public repositories only; private ones need repo")
	default:
		connectors.Reportf(ctx, "scope repo         MISSING needed by every write (public_repo for public repositories)")
		return legate.Errorf(legate.CodePermissionDenied, "github: the token has neither the repo nor the public_repo scope; every write needs one: grant repo (or public_repo) to the token")
	}
	if slices.Contains(sets, "actions") && !c.cfg.ReadOnly {
		if slices.Contains(granted, "workflow") {
			connectors.Reportf(ctx, "scope workflow     ok      needed by rerun_workflow_run")
		} else {
			connectors.Reportf(ctx, "scope workflow     MISSING needed by rerun_workflow_run; grant it or leave actions read-only")
		}
	}
	return nil
}

// toolsets are the names of the toolsets the instance offers.
func (c *Connector) toolsets() []string {
	var out []string
	for _, t := range c.tools {
		if !slices.Contains(out, t.Toolset) {
			out = append(out, t.Toolset)
		}
	}
	return out
}

// AdapterVersion is the version of the github connector's own code.
const AdapterVersion = "1.0.0"

// Describe says what the instance speaks and the classic token scopes
// its toolsets need.
func (c *Connector) Describe() connectors.Description {
	return connectors.Description{AdapterVersion: AdapterVersion, APIVersion: ghcore.APIVersion, Scopes: c.neededScopes()}
}

// neededScopes are the classic token scopes the instance's tools need:
// repo for the repositories' toolsets (public_repo reaches public
// repositories only), workflow to re-run Actions, notifications.
func (c *Connector) neededScopes() []string {
	need := map[string]bool{}
	for _, t := range c.tools {
		switch t.Toolset {
		case "notifications":
			need["notifications"] = true
		case "":
		default:
			need["repo"] = true
		}
		if t.Name == "rerun_workflow_run" {
			need["workflow"] = true
		}
	}
	out := make([]string, 0, len(need))
	for s := range need {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// impliedScopes are the classic scopes each scope grants beside itself.
var impliedScopes = map[string][]string{
	"repo":      {"repo:status", "repo_deployment", "public_repo", "repo:invite", "security_events", "notifications"},
	"admin:org": {"write:org", "read:org"},
	"write:org": {"read:org"},
	"user":      {"read:user", "user:email", "user:follow"},
}

// missingScopes are the scopes of needs that granted neither holds nor
// implies.
func missingScopes(needs, granted []string) []string {
	has := map[string]bool{}
	for _, g := range granted {
		has[g] = true
		for _, i := range impliedScopes[g] {
			has[i] = true
		}
	}
	missing := []string{}
	for _, n := range needs {
		if !has[n] {
			missing = append(missing, n)
		}
	}
	return missing
}

var _ connectors.Connector = (*Connector)(nil)
var _ connectors.ToolCatalog = (*Connector)(nil)
var _ connectors.Describer = (*Connector)(nil)

// retries are the config's retry settings.
func (c Config) retries() saas.Retries {
	return saas.Retries{Timeout: time.Duration(c.Timeout), MaxAttempts: c.MaxAttempts, RetryBackoff: time.Duration(c.RetryBackoff),
		MaxRetryWait: time.Duration(c.MaxRetryWait), RateLimit: c.RateLimit}
}
