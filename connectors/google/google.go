// Package google is the "google" connector: Google Drive (search, read
// and export files, upload, share), Docs (read as Markdown, create, append,
// replace) and Sheets (tabs, read and update ranges, append rows, create),
// through google.golang.org/api, with an OAuth 2.0 refresh token or a
// service account with domain-wide delegation.
//
// Its tools fall into toolsets, one per service (package drive, docs,
// sheets on the shared core gcore); the OAuth scopes an instance needs
// are derived from the toolsets it offers. It is built on connectors/saas:
// the credential is exchanged at the configured token endpoint for an
// access token, held until it expires and exchanged again once when an
// API answers 401; Google's client does not retry ordinary calls, so
// every retry is the kit's, with backoff. Lists page with signed cursors
// bound to their filters; files are named by signed refs. Every write
// happens at most once per idempotency key.
package google

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/google/drive"
	"github.com/legate-mcp/legate/connectors/google/gcore"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/connectors/saas"
)

// Config is a google instance's configuration.
type Config struct {
	// ClientID is the OAuth client's id. It is not a secret: Google shows
	// it in every consent URL, and an installed app ships it; its secret
	// is the client_secret credential.
	ClientID string `yaml:"client_id" desc:"Client ID of the OAuth 2.0 client (Google Cloud console, APIs & Services, Credentials) the refresh token was issued to; not a secret, its secret is the client_secret credential; not needed with service_account_json" example:"1234567890-abc.apps.googleusercontent.com"`
	// Subject is the user a service account acts as.
	Subject string `yaml:"subject" desc:"With the credential service_account_json: the email of the Workspace user the service account acts as (domain-wide delegation, granted the scopes legate connector test prints); empty for the service account's own Drive" example:"ops@example.com"`
	// OAuthURL is the token endpoint.
	OAuthURL string `yaml:"oauth_url" default:"https://oauth2.googleapis.com/token" desc:"Google's OAuth 2.0 token endpoint, where the refresh token or the service account's assertion is exchanged for access tokens"`
	// SheetsURL is the Sheets API's base URL.
	SheetsURL string `yaml:"sheets_url" default:"https://sheets.googleapis.com/" desc:"Base URL of the Sheets API; its paths start with v4/"`
	// DriveURL is the Drive API's base URL, without drive/v3/.
	DriveURL string `yaml:"drive_url" default:"https://www.googleapis.com/" desc:"Base URL of the Drive API; drive/v3/ is added"`
	// DocsURL is the Docs API's base URL.
	DocsURL string `yaml:"docs_url" default:"https://docs.googleapis.com/" desc:"Base URL of the Docs API; its paths start with v1/"`
	// GmailURL is the Gmail API's base URL.
	GmailURL string `yaml:"gmail_url" default:"https://gmail.googleapis.com/" desc:"Base URL of the Gmail API; its paths start with gmail/v1/"`
	// CalendarURL is the Calendar API's base URL, without calendar/v3/.
	CalendarURL string `yaml:"calendar_url" default:"https://www.googleapis.com/" desc:"Base URL of the Calendar API; calendar/v3/ is added"`
	// AllowPrivateNetworks lets the URLs be loopback or private addresses.
	AllowPrivateNetworks bool `yaml:"allow_private_networks" default:"false" desc:"Allow oauth_url and the API URLs on loopback, private or link-local addresses (a test server or an internal proxy); refused by default"`
	// Toolsets selects the groups of tools the instance offers.
	Toolsets []string "yaml:\"toolsets\" desc:\"Groups of tools the instance offers: names from the list below, `default` for the type's defaults, `all` for every tool; empty for the defaults: drive (default), docs (default), sheets (default), gmail, calendar\" example:\"[drive, sheets]\""
	// ReadOnly offers only the tools that read.
	ReadOnly bool `yaml:"read_only" default:"false" desc:"Offer only the tools that read (and ask a service account's token for read-only scopes)"`
	// OperationMarker puts the idempotency marker in what a write makes.
	OperationMarker bool `yaml:"operation_marker" default:"false" desc:"Leave the call's operation marker (lg1-...) in what a write makes, for a retry after a lost answer to find it by: one cell after each appended row's values, an app property of an uploaded file; off, the default, nothing of Legate's is left in the user's data and a lost write is found by its content (the rows at the table's end, the file's name and time)"`
	// AllowPublicSharing lets drive_share_file share with anyone.
	AllowPublicSharing bool `yaml:"allow_public_sharing" default:"false" desc:"Let drive_share_file share a file with anyone who has the link (type anyone); refused by default, so that a model cannot publish a file"`
	// Timeout bounds one request.
	Timeout legate.Duration `yaml:"timeout" default:"15s" desc:"Time limit of one request to Google; a request over it is retried, a write only after checking that it did not happen"`
	// MaxAttempts bounds the requests of one call.
	MaxAttempts int `yaml:"max_attempts" default:"4" desc:"Attempts per call, the first included (1 to 10); retried with backoff on 429, 403 rateLimitExceeded and userRateLimitExceeded, 5xx and network errors"`
	// RetryBackoff is the first wait between attempts.
	RetryBackoff legate.Duration `yaml:"retry_backoff" default:"1s" desc:"First wait before a retry (Google gives no Retry-After); it doubles per attempt, with jitter"`
	// MaxRetryWait is the longest wait between attempts.
	MaxRetryWait legate.Duration `yaml:"max_retry_wait" default:"16s" desc:"Longest wait between attempts; a call that would wait more fails with RATE_LIMITED or TRANSIENT"`
	// RateLimit bounds the requests the instance sends.
	RateLimit httpkit.RateLimit `yaml:"rate_limit" desc:"Requests per second the instance sends at most: per_second (0, the default, for no limit) and burst; Sheets allows 60 read and 60 write requests a minute per user by default" example:"{per_second: 1, burst: 10}"`
}

func init() {
	connectors.Register(connectors.TypeOf(connectors.Info{
		Name:        "google",
		Description: "Google Workspace: Drive, Docs and Sheets, with an OAuth 2.0 refresh token or a service account",
		Credentials: []connectors.Credential{
			{Name: gcore.CredRefreshToken, Description: "OAuth 2.0 refresh token of the Google account, issued to client_id with the scopes the tools need (offline access); or give service_account_json"},
			{Name: gcore.CredClientSecret, Description: "Secret of the OAuth 2.0 client client_id names, with refresh_token"},
			{Name: gcore.CredServiceAccount, Description: "JSON key of a Google Cloud service account, instead of refresh_token; with subject, it acts as that Workspace user by domain-wide delegation"},
		},
	}, New))
}

// Connector is one google instance.
type Connector struct {
	*gcore.Core
	cfg     Config
	catalog []connectors.Tool
	tools   []connectors.Tool
	needs   []gcore.Need // of tools
	selErr  error
}

// New builds an instance from its decoded config; Validate reports an
// invalid one.
func New(inst connectors.Instance, cfg *Config) (connectors.Connector, error) {
	c := &Connector{cfg: *cfg}
	for _, u := range []*string{&c.cfg.SheetsURL, &c.cfg.DriveURL, &c.cfg.DocsURL, &c.cfg.GmailURL, &c.cfg.CalendarURL} {
		*u = withSlash(*u)
	}
	kit := cfg.retries().Options("google", "")
	kit.Markers = cfg.OperationMarker
	c.Core = gcore.New(inst, kit, gcore.Options{
		ClientID: cfg.ClientID, OAuthURL: cfg.OAuthURL, Subject: cfg.Subject,
		Endpoints: map[string]string{gcore.Sheets: c.cfg.SheetsURL, gcore.Drive: c.cfg.DriveURL, gcore.Docs: c.cfg.DocsURL,
			gcore.Gmail: c.cfg.GmailURL, gcore.Calendar: c.cfg.CalendarURL},
		HTTP: netguard.NewClient(netguard.Options{AllowPrivate: cfg.AllowPrivateNetworks, Timeout: time.Duration(cfg.Timeout) + time.Second, MaxRedirects: -1}),
	})
	var needs []gcore.Need
	c.catalog, needs = c.newTools()
	c.tools, c.selErr = connectors.SelectTools("google", Toolsets, cfg.Toolsets, cfg.ReadOnly, c.catalog)
	c.needs = needsOf(needs, c.tools)
	c.Core.Scopes = gcore.Needed(c.needs)
	return c, nil
}

func withSlash(u string) string {
	if u != "" && !strings.HasSuffix(u, "/") {
		return u + "/"
	}
	return u
}

// Validate checks the configuration without I/O.
func (c *Connector) Validate() error {
	var errs []error
	for _, f := range []struct{ name, url string }{{"oauth_url", c.cfg.OAuthURL}, {"sheets_url", c.cfg.SheetsURL}, {"drive_url", c.cfg.DriveURL},
		{"docs_url", c.cfg.DocsURL}, {"gmail_url", c.cfg.GmailURL}, {"calendar_url", c.cfg.CalendarURL}} {
		_, bad := saas.CheckURL(f.name, f.url, c.cfg.AllowPrivateNetworks)
		errs = append(errs, bad...)
	}
	if c.cfg.Subject != "" && (!strings.Contains(c.cfg.Subject, "@") || strings.ContainsAny(c.cfg.Subject, " \t\r\n")) {
		errs = append(errs, legate.Invalid("subject", "must be a user's email address, got %q", c.cfg.Subject))
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

// Scopes are the OAuth scopes (full URLs) the instance's tools need: what
// a refresh token must be granted, what a service account asks for.
func (c *Connector) Scopes() []string { return c.Core.Scopes }

// Test exchanges the credential for a new access token at the token
// endpoint, compares the scopes the endpoint says it granted with those
// the tools need, and lists one Drive file; it reports each through
// connectors.Reportf and fails when the exchange fails, a tool lacks a
// scope, or Drive refuses.
func (c *Connector) Test(ctx context.Context, creds connectors.Credentials) error {
	call := &connectors.Call{Tool: "test", Credentials: gcore.Credentials(creds)}
	connectors.Reportf(ctx, "scopes the tools need: %s", strings.Join(c.Core.Scopes, " "))
	expiry, scope, err := c.Fresh(ctx, call)
	if err != nil {
		connectors.Reportf(ctx, "token at %s: %v", c.cfg.OAuthURL, err)
		return err
	}
	how := "token refresh"
	if c.ServiceAccount(ctx, call) {
		how = "service account token"
		if c.cfg.Subject != "" {
			how += " for " + c.cfg.Subject
		}
	}
	valid := "with no expiry given"
	if !expiry.IsZero() {
		valid = "valid for " + time.Until(expiry).Round(time.Second).String()
	}
	connectors.Reportf(ctx, "%s at %s: ok, a new access token %s", how, c.cfg.OAuthURL, valid)
	missing := c.reportScopes(ctx, call, scope)
	if err := c.testDrive(ctx, call); err != nil {
		return err
	}
	if len(missing) > 0 {
		return legate.Errorf(legate.CodePermissionDenied, "google: the credential lacks a scope for %s; grant it and issue a new refresh token (or widen the service account's delegation)", strings.Join(missing, ", "))
	}
	return nil
}

// reportScopes reports, per tool, the granted scope that lets it work,
// and returns the tools that have none.
func (c *Connector) reportScopes(ctx context.Context, call *connectors.Call, scope string) []string {
	if scope == "" {
		connectors.Reportf(ctx, "scopes: the token endpoint did not say which scopes it granted; the tools need %s", strings.Join(neededScopes(c.needs), ", "))
		return nil
	}
	// The scopes as the endpoint wrote them, masked should it echo a credential.
	var secrets []string
	for _, name := range []string{gcore.CredRefreshToken, gcore.CredClientSecret, gcore.CredServiceAccount} {
		if v, err := call.Credentials.Get(ctx, name); err == nil && v != "" {
			secrets = append(secrets, v)
		}
	}
	granted := strings.Fields(legate.NewSecrets(secrets...).MaskString(scope))
	slices.Sort(granted)
	connectors.Reportf(ctx, "scopes granted: %s", strings.Join(granted, " "))
	var missing, lacked []string
	defer func() { connectors.ReportScopes(ctx, granted, lacked) }()
	for _, n := range c.needs {
		by := slices.IndexFunc(n.Scopes, func(s string) bool { return slices.Contains(granted, gcore.ScopePrefix+s) })
		if by < 0 {
			missing = append(missing, n.Tool)
			if len(n.Scopes) > 0 && !slices.Contains(lacked, gcore.ScopePrefix+n.Scopes[0]) {
				lacked = append(lacked, gcore.ScopePrefix+n.Scopes[0])
			}
			connectors.Reportf(ctx, "tool %-18s MISSING one of the scopes %s", n.Tool, strings.Join(n.Scopes, ", "))
			continue
		}
		connectors.Reportf(ctx, "tool %-18s ok      by the scope %s", n.Tool, n.Scopes[by])
	}
	return missing
}

// testDrive lists one Drive file, when the instance offers Drive.
func (c *Connector) testDrive(ctx context.Context, call *connectors.Call) error {
	if !slices.ContainsFunc(c.tools, func(t connectors.Tool) bool { return t.Toolset == "drive" }) {
		return nil
	}
	n, err := drive.Probe(ctx, c.Core, call)
	if err != nil {
		connectors.Reportf(ctx, "drive files.list: %v", err)
		return err
	}
	connectors.Reportf(ctx, "drive files.list: ok, %d file(s) on a page of 1", n)
	return nil
}

func neededScopes(needs []gcore.Need) []string {
	var out []string
	for _, n := range needs {
		out = append(out, n.Tool+" ("+strings.Join(n.Scopes, " or ")+")")
	}
	return out
}

// AdapterVersion is the version of the google connector's own code.
const AdapterVersion = "1.0.0"

// Describe says which API version of each service the instance's
// toolsets speak, and the scopes it asks for.
func (c *Connector) Describe() connectors.Description {
	var apis []string
	for _, s := range Toolsets {
		if slices.ContainsFunc(c.tools, func(t connectors.Tool) bool { return t.Toolset == s.Name }) {
			apis = append(apis, s.Name+" "+gcore.APIVersions[s.Name])
		}
	}
	return connectors.Description{AdapterVersion: AdapterVersion, APIVersion: strings.Join(apis, ", "), Scopes: append([]string{}, c.Core.Scopes...)}
}

var _ connectors.Connector = (*Connector)(nil)
var _ connectors.ToolCatalog = (*Connector)(nil)
var _ connectors.Describer = (*Connector)(nil)

// retries are the config's retry settings.
func (c Config) retries() saas.Retries {
	return saas.Retries{Timeout: time.Duration(c.Timeout), MaxAttempts: c.MaxAttempts, RetryBackoff: time.Duration(c.RetryBackoff),
		MaxRetryWait: time.Duration(c.MaxRetryWait), RateLimit: c.RateLimit}
}
