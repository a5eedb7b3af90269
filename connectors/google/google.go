// Package google is the "google" connector: it reads ranges of Google
// Sheets spreadsheets and appends rows to them, and lists and reads the
// files of Google Drive, with one OAuth 2.0 refresh token for both, through
// google.golang.org/api (sheets/v4, drive/v3).
//
// It is built on connectors/saas. The refresh token, the OAuth client's
// secret and its id are exchanged at the configured token endpoint for an
// access token, held until it expires and exchanged again once when an API
// answers 401 (saas.Options.Exchange); Google's client does not retry
// ordinary calls, so every retry is the kit's, with backoff (Google gives
// no Retry-After contract). Lists page with signed cursors bound to their
// filters; files and spreadsheets are named by signed refs. A row is
// appended at most once per idempotency key: it carries the key's marker
// in one cell after its values, and an attempt whose answer was lost reads
// the table back looking for it before appending again.
package google

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/connectors/saas"
)

// Config is a google instance's configuration.
type Config struct {
	// ClientID is the OAuth client's id. It is not a secret: Google shows
	// it in every consent URL, and an installed app ships it; its secret
	// is the client_secret credential.
	ClientID string `yaml:"client_id" required:"true" desc:"Client ID of the OAuth 2.0 client (Google Cloud console, APIs & Services, Credentials) the refresh token was issued to; not a secret, its secret is the client_secret credential" example:"1234567890-abc.apps.googleusercontent.com"`
	// OAuthURL is the token endpoint.
	OAuthURL string `yaml:"oauth_url" default:"https://oauth2.googleapis.com/token" desc:"Google's OAuth 2.0 token endpoint, where the refresh token is exchanged for access tokens"`
	// SheetsURL is the Sheets API's base URL.
	SheetsURL string `yaml:"sheets_url" default:"https://sheets.googleapis.com/" desc:"Base URL of the Sheets API; its paths start with v4/"`
	// DriveURL is the Drive API's base URL, without drive/v3/.
	DriveURL string `yaml:"drive_url" default:"https://www.googleapis.com/" desc:"Base URL of the Drive API; drive/v3/ is added"`
	// AllowPrivateNetworks lets the URLs be loopback or private addresses.
	AllowPrivateNetworks bool `yaml:"allow_private_networks" default:"false" desc:"Allow oauth_url, sheets_url and drive_url on loopback, private or link-local addresses (a test server or an internal proxy); refused by default"`
	// OperationMarker puts the idempotency marker in the appended row.
	OperationMarker *bool `yaml:"operation_marker" default:"true" desc:"Append, after a row's values, one cell holding the call's operation marker (lg1-...), so that an append whose answer was lost is found instead of made twice; off, such an append fails with CONFLICT instead of being retried"`
	// Timeout bounds one request.
	Timeout legate.Duration `yaml:"timeout" default:"15s" desc:"Time limit of one request to Google; a request over it is retried, an append only after checking that it did not happen"`
	// MaxAttempts bounds the requests of one call.
	MaxAttempts int `yaml:"max_attempts" default:"4" desc:"Attempts per call, the first included (1 to 10); retried with backoff on 429, 403 rateLimitExceeded and userRateLimitExceeded, 5xx and network errors"`
	// RetryBackoff is the first wait between attempts.
	RetryBackoff legate.Duration `yaml:"retry_backoff" default:"1s" desc:"First wait before a retry (Google gives no Retry-After); it doubles per attempt, with jitter"`
	// MaxRetryWait is the longest wait between attempts.
	MaxRetryWait legate.Duration `yaml:"max_retry_wait" default:"16s" desc:"Longest wait between attempts; a call that would wait more fails with RATE_LIMITED or TRANSIENT"`
	// RateLimit bounds the requests the instance sends.
	RateLimit httpkit.RateLimit `yaml:"rate_limit" desc:"Requests per second the instance sends at most: per_second (0, the default, for no limit) and burst; Sheets allows 60 read and 60 write requests a minute per user by default" example:"{per_second: 1, burst: 10}"`
}

// Limits of the configuration and of the tools.
const (
	// The page sizes of drive_list_files and sheets_read_range (rows).
	DefaultFiles, MaxFiles = 100, 1000
	DefaultRows, MaxRows   = 100, 1000
	// MaxCells bounds the cells of an appended row, MaxCellBytes one
	// cell (Sheets' own limit is 50000 characters).
	MaxCells     = 1000
	MaxCellBytes = 50000
	// MaxRangeBytes bounds a range argument.
	MaxRangeBytes = 500
)

// The credentials.
const (
	credRefreshToken = "refresh_token"
	credClientSecret = "client_secret"
)

func init() {
	connectors.Register(connectors.TypeOf(connectors.Info{
		Name:        "google",
		Description: "Google Sheets and Drive: read ranges and append rows, list and read files, with an OAuth 2.0 refresh token",
		Credentials: []connectors.Credential{
			{Name: credRefreshToken, Description: "OAuth 2.0 refresh token of the Google account, issued to client_id with the scopes the tools need (offline access)", Required: true},
			{Name: credClientSecret, Description: "Secret of the OAuth 2.0 client client_id names", Required: true},
		},
	}, New))
}

// Connector is one google instance.
type Connector struct {
	cfg    Config
	marker bool // OperationMarker, defaulted
	kit    *saas.Kit
	http   *http.Client
	tokens tokens
	tools  []connectors.Tool
}

// New builds an instance from its decoded config; Validate reports an
// invalid one.
func New(inst connectors.Instance, cfg *Config) (connectors.Connector, error) {
	c := &Connector{cfg: *cfg, marker: cfg.OperationMarker == nil || *cfg.OperationMarker}
	c.cfg.SheetsURL = withSlash(c.cfg.SheetsURL)
	c.cfg.DriveURL = withSlash(c.cfg.DriveURL)
	opts := cfg.retries().Options("google", credRefreshToken)
	opts.Exchange, opts.Masked = c.exchange, []string{credClientSecret}
	c.kit = saas.New(inst, opts)
	c.http = netguard.NewClient(netguard.Options{AllowPrivate: cfg.AllowPrivateNetworks, Timeout: time.Duration(cfg.Timeout) + time.Second, MaxRedirects: -1})
	c.tokens = newTokens()
	c.tools = c.newTools()
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
	if strings.TrimSpace(c.cfg.ClientID) == "" {
		errs = append(errs, legate.Invalid("client_id", "is required"))
	}
	for _, f := range []struct{ name, url string }{{"oauth_url", c.cfg.OAuthURL}, {"sheets_url", c.cfg.SheetsURL}, {"drive_url", c.cfg.DriveURL}} {
		_, bad := saas.CheckURL(f.name, f.url, c.cfg.AllowPrivateNetworks)
		errs = append(errs, bad...)
	}
	errs = append(errs, c.cfg.retries().Validate()...)
	return errors.Join(errs...)
}

// Tools lists the instance's tools.
func (c *Connector) Tools() []connectors.Tool { return c.tools }

// scopeNeeds are the tools and, for each, the OAuth scopes any one of
// which lets it work (drive.file too, but only on files the app opened or
// created).
var scopeNeeds = []struct {
	tool   string
	scopes []string
}{
	{"sheets_read_range", []string{"spreadsheets.readonly", "spreadsheets", "drive.readonly", "drive"}},
	{"sheets_append_row", []string{"spreadsheets", "drive"}},
	{"drive_list_files", []string{"drive.metadata.readonly", "drive.metadata", "drive.readonly", "drive"}},
	{"drive_get_file", []string{"drive.metadata.readonly", "drive.metadata", "drive.readonly", "drive"}},
}

const scopePrefix = "https://www.googleapis.com/auth/"

// Test exchanges the refresh token for a new access token at the token
// endpoint, compares the scopes the endpoint says it granted with those
// the tools need, and lists one Drive file; it reports each through
// connectors.Reportf and fails when the exchange fails, a tool lacks a
// scope, or Drive refuses.
func (c *Connector) Test(ctx context.Context, creds connectors.Credentials) error {
	call := &connectors.Call{Tool: "test", Credentials: creds}
	refresh, err := c.kit.Token(ctx, call)
	if err != nil {
		connectors.Reportf(ctx, "credentials: %v", err)
		return err
	}
	h, err := c.refresh(ctx, call, refresh)
	if err != nil {
		connectors.Reportf(ctx, "token refresh at %s: %v", c.cfg.OAuthURL, err)
		return err
	}
	c.tokens.put(h)
	valid := "with no expiry given"
	if !h.expiry.IsZero() {
		valid = "valid for " + time.Until(h.expiry).Round(time.Second).String()
	}
	connectors.Reportf(ctx, "token refresh at %s: ok, a new access token %s", c.cfg.OAuthURL, valid)
	var missing []string
	if h.scope == "" {
		connectors.Reportf(ctx, "scopes: the token endpoint did not say which scopes it granted; the tools need %s", strings.Join(neededScopes(), ", "))
	} else {
		// The scopes as the endpoint wrote them, masked should it echo a credential.
		secret, _ := c.secret(ctx, call)
		granted := strings.Fields(legate.NewSecrets(refresh, secret, h.access).MaskString(h.scope))
		slices.Sort(granted)
		connectors.Reportf(ctx, "scopes granted: %s", strings.Join(granted, " "))
		for _, n := range scopeNeeds {
			by := slices.IndexFunc(n.scopes, func(s string) bool { return slices.Contains(granted, scopePrefix+s) })
			if by < 0 {
				missing = append(missing, n.tool)
				connectors.Reportf(ctx, "tool %-18s MISSING one of the scopes %s", n.tool, strings.Join(n.scopes, ", "))
				continue
			}
			connectors.Reportf(ctx, "tool %-18s ok      by the scope %s", n.tool, n.scopes[by])
		}
	}
	var listed int
	err = c.kit.Read(ctx, call, func(ctx context.Context, token string) error {
		api, err := c.apis(ctx, token)
		if err != nil {
			return err
		}
		list, err := api.drive.Files.List().PageSize(1).Fields("files(id)").Context(ctx).Do()
		if err != nil {
			return mapError(ctx, err)
		}
		listed = len(list.Files)
		return nil
	})
	if err != nil {
		connectors.Reportf(ctx, "drive files.list: %v", err)
		return err
	}
	connectors.Reportf(ctx, "drive files.list: ok, %d file(s) on a page of 1", listed)
	if len(missing) > 0 {
		return legate.Errorf(legate.CodePermissionDenied, "google: the refresh token lacks a scope for %s; grant it and issue a new refresh token", strings.Join(missing, ", "))
	}
	return nil
}

func neededScopes() []string {
	var out []string
	for _, n := range scopeNeeds {
		out = append(out, n.tool+" ("+strings.Join(n.scopes, " or ")+")")
	}
	return out
}

var _ connectors.Connector = (*Connector)(nil)

// retries are the config's retry settings.
func (c Config) retries() saas.Retries {
	return saas.Retries{Timeout: time.Duration(c.Timeout), MaxAttempts: c.MaxAttempts, RetryBackoff: time.Duration(c.RetryBackoff),
		MaxRetryWait: time.Duration(c.MaxRetryWait), RateLimit: c.RateLimit}
}
