// Package httpconn is the "http" connector: authenticated calls to one REST
// API below a fixed base URL, and the built-in read-only http.request tool
// ([Builtin]).
//
// An instance is configured with the API's base_url; its one tool, call,
// sends any method to a path below that URL. A path can never leave the
// base URL (absolute URLs, "..", "//host" and their encoded forms are
// refused), credentials come only from the instance's credentials and are
// attached at call time, and every connection goes through netguard, so
// private and metadata addresses are refused unless allow_private_networks
// is set. Responses are bounded by max_response_bytes; credential values
// echoed by the server are masked in results and errors.
//
// The folder is connectors/http; the package is named httpconn so that it
// does not shadow net/http.
package httpconn

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
)

// MaxResponseLimit is the largest max_response_bytes accepted: 64 MiB.
const MaxResponseLimit = 64 << 20

// The auth modes of the auth setting.
const (
	AuthAuto   = "auto"   // bearer if token is set, else basic if username is set, else header if header_name and header_value are set, else none
	AuthNone   = "none"   // no credentials are sent
	AuthBearer = "bearer" // Authorization: Bearer <token>
	AuthBasic  = "basic"  // Authorization: Basic <username:password>
	AuthHeader = "header" // <header_name>: <header_value>
)

// Config is an http instance's configuration.
type Config struct {
	// BaseURL is the URL every call's path is relative to.
	BaseURL string `yaml:"base_url" required:"true" desc:"Absolute http or https URL every call's path is relative to; calls cannot leave it" example:"https://api.example.com/v1"`
	// AllowPrivateNetworks lets the instance reach loopback, private and
	// link-local addresses.
	AllowPrivateNetworks bool `yaml:"allow_private_networks" default:"false" desc:"Allow loopback, private, link-local (cloud metadata) and other internal addresses; refused by default to prevent server-side request forgery"`
	// Timeout bounds one call, the response body included.
	Timeout legate.Duration `yaml:"timeout" default:"30s" desc:"Time limit of one call, reading the response included"`
	// MaxResponseBytes bounds the response body returned.
	MaxResponseBytes int `yaml:"max_response_bytes" default:"1048576" desc:"Largest response body returned, in bytes (at most 64 MiB); a longer body is cut and marked truncated"`
	// Auth chooses how the credentials are sent.
	Auth string `yaml:"auth" default:"auto" desc:"How credentials are sent: auto, none, bearer (token), basic (username, password) or header (header_name with the header_value credential)"`
	// HeaderName is the header carrying the header_value credential.
	HeaderName string `yaml:"header_name" desc:"Header that carries the header_value credential, e.g. X-API-Key" example:"X-API-Key"`
	// DefaultHeaders are sent with every call; a call's headers override them.
	DefaultHeaders map[string]string `yaml:"default_headers" desc:"Headers sent with every call (not secrets: those belong in credentials); a call's own headers override them"`
	// RateLimit bounds the calls the instance sends.
	RateLimit httpkit.RateLimit `yaml:"rate_limit" desc:"Calls per second the instance sends at most: per_second (0, the default, for no limit) and burst (how many may go at once; 0 means 1). A call whose turn would come after its deadline fails at once with RATE_LIMITED and the wait" example:"{per_second: 10, burst: 20}"`
}

func init() {
	connectors.Register(connectors.TypeOf(connectors.Info{
		Name:        "http",
		Description: "Call a REST API below a fixed base URL with the instance's credentials",
		Credentials: []connectors.Credential{
			{Name: "token", Description: "Bearer token sent as Authorization: Bearer <token>"},
			{Name: "username", Description: "User name for HTTP basic authentication"},
			{Name: "password", Description: "Password for HTTP basic authentication"},
			{Name: "header_value", Description: "Value of the header named by header_name, e.g. an API key"},
		},
	}, New))
}

// Connector is one http instance.
type Connector struct {
	id      string
	cfg     Config
	base    *url.URL // nil when base_url is invalid; Validate reports it
	client  *http.Client
	limiter *httpkit.Limiter // nil: no limit
	tools   []connectors.Tool
}

// New builds an instance from its decoded config. An invalid configuration
// is reported by Validate, not here.
func New(inst connectors.Instance, cfg *Config) (connectors.Connector, error) {
	c := &Connector{id: inst.ID, cfg: *cfg, limiter: httpkit.NewLimiter("http", cfg.RateLimit)}
	if u, err := parseBase(cfg.BaseURL); err == nil {
		c.base = u
	}
	c.client = netguard.NewClient(netguard.Options{
		AllowPrivate: cfg.AllowPrivateNetworks,
		Timeout:      time.Duration(cfg.Timeout),
	})
	guarded := c.client.CheckRedirect
	c.client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := guarded(req, via); err != nil {
			return err
		}
		// Credentials belong to the base URL's origin: a redirect elsewhere
		// goes without them (net/http drops Authorization and Cookie across
		// domains, but not a custom header such as X-API-Key).
		if !sameOrigin(req.URL, via[0].URL) {
			for _, h := range c.credentialHeaders() {
				req.Header.Del(h)
			}
		}
		return nil
	}
	c.tools = []connectors.Tool{c.callTool()}
	return c, nil
}

// Validate checks the configuration without I/O and reports every problem.
func (c *Connector) Validate() error {
	var errs []error
	if base, err := parseBase(c.cfg.BaseURL); err != nil {
		errs = append(errs, legate.Invalid("base_url", "%v", err))
	} else if !c.cfg.AllowPrivateNetworks {
		if err := netguard.CheckHost(base.Host); err != nil {
			errs = append(errs, legate.Invalid("base_url", "%v", err))
		}
	}
	if c.cfg.Timeout <= 0 {
		errs = append(errs, legate.Invalid("timeout", "must be positive"))
	}
	if c.cfg.MaxResponseBytes <= 0 || c.cfg.MaxResponseBytes > MaxResponseLimit {
		errs = append(errs, legate.Invalid("max_response_bytes", "must be between 1 and %d (64 MiB), got %d", MaxResponseLimit, c.cfg.MaxResponseBytes))
	}
	switch c.cfg.Auth {
	case AuthAuto, AuthNone, AuthBearer, AuthBasic:
	case AuthHeader:
		if c.cfg.HeaderName == "" {
			errs = append(errs, legate.Invalid("header_name", "is required with auth: header"))
		}
	default:
		errs = append(errs, legate.Invalid("auth", "must be one of auto, none, bearer, basic, header; got %q", c.cfg.Auth))
	}
	if h := c.cfg.HeaderName; h != "" {
		switch {
		case !netguard.ValidHeaderName(h):
			errs = append(errs, legate.Invalid("header_name", "%q is not a valid header name", h))
		case netguard.ReservedHeader(h):
			errs = append(errs, legate.Invalid("header_name", "%q is managed by the transport and cannot carry a credential", h))
		}
	}
	for name, value := range c.cfg.DefaultHeaders {
		field := "default_headers." + name
		switch {
		case !netguard.ValidHeaderName(name):
			errs = append(errs, legate.Invalid(field, "not a valid header name"))
		case netguard.ReservedHeader(name):
			errs = append(errs, legate.Invalid(field, "is managed by the transport and cannot be set"))
		case isCredentialHeader(name) || strings.EqualFold(name, c.cfg.HeaderName):
			errs = append(errs, legate.Invalid(field, "would carry a secret in plain configuration: use auth and the connector's credentials"))
		case !netguard.ValidHeaderValue(value):
			errs = append(errs, legate.Invalid(field, "value holds control characters"))
		}
	}
	errs = append(errs, c.cfg.RateLimit.Validate("rate_limit")...)
	return errors.Join(errs...)
}

// Test checks that base_url answers, with the credentials: any HTTP answer
// below 500 counts as reachable, except 401 and 403.
func (c *Connector) Test(ctx context.Context, creds connectors.Credentials) error {
	if c.base == nil {
		return legate.Errorf(legate.CodeInvalidArgument, "http: base_url is invalid")
	}
	auth, _, err := c.auth(ctx, creds)
	if err != nil {
		return err
	}
	status := 0
	for _, method := range []string{http.MethodHead, http.MethodGet} {
		req, err := http.NewRequestWithContext(ctx, method, c.base.String(), nil)
		if err != nil {
			return legate.Errorf(legate.CodeInvalidArgument, "http: %v", err)
		}
		c.setHeaders(req.Header, nil, auth)
		resp, err := c.client.Do(req)
		if err != nil {
			return transportError(ctx, err, time.Duration(c.cfg.Timeout))
		}
		httpkit.Drain(resp)
		status = resp.StatusCode
		// Some servers refuse HEAD; ask again with GET.
		if status != http.StatusMethodNotAllowed && status != http.StatusNotImplemented {
			break
		}
	}
	switch {
	case status == http.StatusUnauthorized:
		return legate.Errorf(legate.CodeAuthExpired, "http: %s answered 401 Unauthorized: check the credentials", c.base.Redacted())
	case status == http.StatusForbidden:
		return legate.Errorf(legate.CodePermissionDenied, "http: %s answered 403 Forbidden", c.base.Redacted())
	case status >= 500:
		return legate.Errorf(legate.CodeTransient, "http: %s answered %d %s", c.base.Redacted(), status, http.StatusText(status))
	}
	return nil
}

// Tools lists the instance's one tool, call.
func (c *Connector) Tools() []connectors.Tool { return c.tools }

// Close releases the instance's idle connections.
func (c *Connector) Close() error {
	c.client.CloseIdleConnections()
	return nil
}

// parseBase checks base_url: absolute http(s), a host, no user info, query
// or fragment.
func parseBase(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not a URL: %v", stripURLErr(err))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("must be an absolute http or https URL, got %q", raw)
	case u.Host == "" || u.Hostname() == "":
		return nil, errors.New("has no host")
	case u.User != nil:
		return nil, errors.New("must not hold user info: use auth: basic with the username and password credentials")
	case u.RawQuery != "" || u.ForceQuery:
		return nil, errors.New("must not hold a query: a call passes query parameters")
	case u.Fragment != "":
		return nil, errors.New("must not hold a fragment")
	}
	return u, nil
}

// stripURLErr keeps the reason of a *url.Error without repeating the URL.
func stripURLErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func sameOrigin(a, b *url.URL) bool {
	return a.Scheme == b.Scheme && strings.EqualFold(a.Host, b.Host)
}

// AdapterVersion is the version of the http connector's own code.
const AdapterVersion = "1.0.0"

// Describe says the connector's version; it speaks no provider's
// versioned API: the API below base_url is the operator's, its version theirs.
func (c *Connector) Describe() connectors.Description {
	return connectors.Description{AdapterVersion: AdapterVersion}
}

var (
	_ connectors.Connector = (*Connector)(nil)
	_ connectors.Closer    = (*Connector)(nil)
	_ connectors.Describer = (*Connector)(nil)
)
