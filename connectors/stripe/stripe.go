// Package stripe is the "stripe" connector: it reads customers, lists
// charges and refunds them on the workspace's own Stripe account, with a
// secret or restricted key, over Stripe's REST API (api.go).
//
// It is built on connectors/saas: the kit's retry loop is the only one, lists
// page with signed cursors over Stripe's starting_after, objects are named
// by signed refs, and create_refund sends a key of its own as Stripe's
// Idempotency-Key, the same on every attempt and every retry of the call,
// so that Stripe performs the refund at most once.
package stripe

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/connectors/saas"
)

// Config is a stripe instance's configuration.
type Config struct {
	// BaseURL is the API's base URL.
	BaseURL string `yaml:"base_url" default:"https://api.stripe.com" desc:"Base URL of the Stripe API, without /v1 (a test server or stripe-mock in tests)"`
	// AllowPrivateNetworks lets base_url be a loopback or private address.
	AllowPrivateNetworks bool `yaml:"allow_private_networks" default:"false" desc:"Allow base_url on loopback, private or link-local addresses (stripe-mock, a test server); refused by default"`
	// Mode is the kind of key the instance accepts.
	Mode string `yaml:"mode" default:"any" desc:"Keys the instance accepts: test (sk_test_, rk_test_), live (sk_live_, rk_live_) or any; a call with a key of the other mode is refused before it reaches Stripe"`
	// Timeout bounds one request.
	Timeout legate.Duration `yaml:"timeout" default:"30s" desc:"Time limit of one request to Stripe; a request over it is retried, a refund with the same idempotency key"`
	// MaxAttempts bounds the requests of one call.
	MaxAttempts int `yaml:"max_attempts" default:"3" desc:"Attempts per call, the first included (1 to 10); retried on rate limits (429), 5xx and network errors"`
	// RetryBackoff is the first wait between attempts.
	RetryBackoff legate.Duration `yaml:"retry_backoff" default:"500ms" desc:"First wait before a retry when Stripe gives no Retry-After; it doubles per attempt, with jitter"`
	// MaxRetryWait is the longest wait waited.
	MaxRetryWait legate.Duration `yaml:"max_retry_wait" default:"10s" desc:"Longest wait between attempts; a rate limit asking for more fails the call with RATE_LIMITED and the wait"`
	// RateLimit bounds the requests the instance sends.
	RateLimit httpkit.RateLimit `yaml:"rate_limit" desc:"Requests per second the instance sends at most: per_second (0, the default, for no limit) and burst; Stripe allows 100 per second in live mode and 25 in test mode" example:"{per_second: 20, burst: 40}"`
}

// Limits of the configuration and of the tools.
const (
	// The page size of list_charges (Stripe's own maximum is 100).
	DefaultCharges, MaxCharges = 25, 100
)

// The modes of Config.Mode.
const (
	ModeAny  = "any"
	ModeTest = "test"
	ModeLive = "live"
)

const credSecretKey = "secret_key"

func init() {
	connectors.Register(connectors.TypeOf(connectors.Info{
		Name:        "stripe",
		Description: "Stripe account: read customers, list charges and refund them, with a secret or restricted key",
		Credentials: []connectors.Credential{
			{Name: credSecretKey, Description: "Secret key (sk_live_..., sk_test_...) or, better, a restricted key (rk_live_..., rk_test_...) with Customers read, Charges read and Refunds write", Required: true},
		},
	}, New))
}

// Connector is one stripe instance.
type Connector struct {
	cfg   Config
	kit   *saas.Kit
	hc    *http.Client
	base  string // base_url without its trailing slash
	tools []connectors.Tool
}

// New builds an instance from its decoded config; Validate reports an
// invalid one.
func New(inst connectors.Instance, cfg *Config) (connectors.Connector, error) {
	c := &Connector{cfg: *cfg}
	c.kit = saas.New(inst, cfg.retries().Options("stripe", credSecretKey))
	hc := netguard.NewClient(netguard.Options{AllowPrivate: cfg.AllowPrivateNetworks, Timeout: time.Duration(cfg.Timeout) + time.Second, MaxRedirects: -1})
	hc.Transport = &recorder{next: hc.Transport}
	// One client for the instance: the key is passed with each request,
	// resolved per call, and the kit's loop, which knows the call's
	// deadline and its idempotency key, is the only one that retries.
	c.hc, c.base = hc, strings.TrimRight(cfg.BaseURL, "/")
	c.tools = c.newTools()
	return c, nil
}

// Validate checks the configuration without I/O.
func (c *Connector) Validate() error {
	u, errs := saas.CheckURL("base_url", c.cfg.BaseURL, c.cfg.AllowPrivateNetworks)
	if u != nil && strings.Trim(u.Path, "/") != "" {
		errs = append(errs, legate.Invalid("base_url", "must hold no path (the client adds /v1/...)"))
	}
	switch c.cfg.Mode {
	case ModeAny, ModeTest, ModeLive:
	default:
		errs = append(errs, legate.Invalid("mode", "must be test, live or any, got %q", c.cfg.Mode))
	}
	errs = append(errs, c.cfg.retries().Validate()...)
	return errors.Join(errs...)
}

// Tools lists the instance's tools.
func (c *Connector) Tools() []connectors.Tool { return c.tools }

// Test reports the key's kind and mode (from its prefix), then reads the
// account (GET /v1/account) and the balance (GET /v1/balance), and lists
// one charge, one customer and one refund to check the read permissions a
// restricted key needs. Refunds write cannot be checked without refunding;
// the report says so. Each line goes through connectors.Reportf.
func (c *Connector) Test(ctx context.Context, creds connectors.Credentials) error {
	call := &connectors.Call{Tool: "test", Credentials: creds}
	key, err := c.kit.Token(ctx, call)
	if err != nil {
		connectors.Reportf(ctx, "key: %v", err)
		return err
	}
	kind, mode := keyKind(key)
	connectors.Reportf(ctx, "key: %s, %s mode (from its prefix); API version %s", kind, mode, apiVersion)
	if err := c.checkMode(key); err != nil {
		connectors.Reportf(ctx, "mode: %v", err)
		return err
	}
	var acct account
	err = c.get(ctx, call, "/v1/account", nil, &acct)
	switch {
	case err == nil:
		name := ""
		if acct.BusinessProfile != nil && acct.BusinessProfile.Name != "" {
			name = ", " + acct.BusinessProfile.Name
		}
		connectors.Reportf(ctx, "GET /v1/account: ok, %s%s, charges enabled: %t", acct.ID, name, acct.ChargesEnabled)
	case legate.CodeOf(err) == legate.CodePermissionDenied:
		// A restricted key may not read the account; the tools do not need it.
		connectors.Reportf(ctx, "GET /v1/account: not permitted for this key (not needed by the tools)")
	default:
		connectors.Reportf(ctx, "GET /v1/account: %v", err)
		return err
	}
	var bal balance
	if err := c.get(ctx, call, "/v1/balance", nil, &bal); err != nil {
		connectors.Reportf(ctx, "GET /v1/balance: %v", err)
		if legate.CodeOf(err) != legate.CodePermissionDenied {
			return err
		}
	} else {
		var avail []string
		for _, a := range bal.Available {
			avail = append(avail, formatMoney(a.Amount, a.Currency))
		}
		if len(avail) == 0 {
			avail = []string{"nothing"}
		}
		connectors.Reportf(ctx, "GET /v1/balance: ok, available %s, livemode %t", strings.Join(avail, ", "), bal.Livemode)
		if bal.Livemode != (mode == ModeLive) {
			connectors.Reportf(ctx, "mode: Stripe says livemode %t, the key's prefix says %s", bal.Livemode, mode)
		}
	}
	var failed error
	for _, p := range []struct{ path, permission, tools string }{
		{"/v1/customers", "Customers read", "get_customer"},
		{"/v1/charges", "Charges read", "list_charges, create_refund"},
		{"/v1/refunds", "Refunds read", "create_refund (which needs Refunds write)"},
	} {
		err := c.get(ctx, call, p.path, url.Values{"limit": {"1"}}, &anyList{})
		switch {
		case err == nil:
			connectors.Reportf(ctx, "GET %s?limit=1: ok    %s, needed by %s", p.path, p.permission, p.tools)
		case legate.CodeOf(err) == legate.CodePermissionDenied:
			connectors.Reportf(ctx, "GET %s?limit=1: MISSING %s, needed by %s", p.path, p.permission, p.tools)
			failed = errors.Join(failed, err)
		default:
			connectors.Reportf(ctx, "GET %s?limit=1: %v", p.path, err)
			return err
		}
	}
	connectors.Reportf(ctx, "Refunds write: not checked (it would refund); a restricted key needs it for create_refund")
	if failed != nil {
		return legate.Errorf(legate.CodePermissionDenied, "stripe: the key lacks permissions the tools need; see the report")
	}
	return nil
}

// get reads path into v through the kit, with the params (nil for none)
// in its query.
func (c *Connector) get(ctx context.Context, call *connectors.Call, path string, params url.Values, v any) error {
	return c.kit.Read(ctx, call, func(ctx context.Context, key string) error {
		return c.send(ctx, request{method: http.MethodGet, path: path, params: params}, key, v)
	})
}

// send makes one request with key, its error canonical; a key of the
// other mode than the instance's is refused unsent.
func (c *Connector) send(ctx context.Context, r request, key string, v any) error {
	if err := c.checkMode(key); err != nil {
		return err
	}
	ctx, ans := withAnswer(ctx)
	return mapError(ctx, ans, c.do(ctx, r, key, v))
}

// checkMode refuses a key of the other mode than the instance's.
func (c *Connector) checkMode(key string) error {
	if c.cfg.Mode == ModeAny || c.cfg.Mode == "" {
		return nil
	}
	if _, mode := keyKind(key); mode != c.cfg.Mode {
		return legate.Errorf(legate.CodePermissionDenied, "stripe: this instance takes %s-mode keys only, and its secret_key is a %s-mode key", c.cfg.Mode, mode)
	}
	return nil
}

// keyKind tells a key's kind and mode from its prefix, never quoting it.
func keyKind(key string) (kind, mode string) {
	kind = "an unknown kind of key"
	switch {
	case strings.HasPrefix(key, "sk_"):
		kind = "a secret key"
	case strings.HasPrefix(key, "rk_"):
		kind = "a restricted key"
	}
	mode = "an unknown"
	switch {
	case strings.HasPrefix(key, "sk_test_"), strings.HasPrefix(key, "rk_test_"):
		mode = ModeTest
	case strings.HasPrefix(key, "sk_live_"), strings.HasPrefix(key, "rk_live_"):
		mode = ModeLive
	}
	return kind, mode
}

var _ connectors.Connector = (*Connector)(nil)

// retries are the config's retry settings.
func (c Config) retries() saas.Retries {
	return saas.Retries{Timeout: time.Duration(c.Timeout), MaxAttempts: c.MaxAttempts, RetryBackoff: time.Duration(c.RetryBackoff),
		MaxRetryWait: time.Duration(c.MaxRetryWait), RateLimit: c.RateLimit}
}
