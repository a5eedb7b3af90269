// Package stripe is the "stripe" connector: customers, charges, payment
// intents and refunds, invoices and subscriptions, products, prices and
// payment links, disputes, the balance, and Stripe's search, on the
// workspace's own Stripe account, with a secret or restricted key, over
// Stripe's REST API (package stcore).
//
// Its tools fall into toolsets (customers, payments, billing, disputes,
// balance and search by default; catalog on request), each of class read,
// write or destructive; read_only leaves only the reads.
//
// It is built on connectors/saas: the kit's retry loop is the only one,
// lists page with signed cursors over Stripe's starting_after (search over
// its next_page), objects are named by signed refs or Stripe's ids, and
// every write sends a key of its own as Stripe's Idempotency-Key, the same
// on every attempt and every retry of the call, so that Stripe performs it
// at most once.
package stripe

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/stripe/stcore"
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
	Timeout legate.Duration `yaml:"timeout" default:"30s" desc:"Time limit of one request to Stripe; a request over it is retried, a write with the same idempotency key"`
	// MaxAttempts bounds the requests of one call.
	MaxAttempts int `yaml:"max_attempts" default:"3" desc:"Attempts per call, the first included (1 to 10); retried on rate limits (429), 5xx and network errors"`
	// RetryBackoff is the first wait between attempts.
	RetryBackoff legate.Duration `yaml:"retry_backoff" default:"500ms" desc:"First wait before a retry when Stripe gives no Retry-After; it doubles per attempt, with jitter"`
	// MaxRetryWait is the longest wait waited.
	MaxRetryWait legate.Duration `yaml:"max_retry_wait" default:"10s" desc:"Longest wait between attempts; a rate limit asking for more fails the call with RATE_LIMITED and the wait"`
	// RateLimit bounds the requests the instance sends.
	RateLimit httpkit.RateLimit `yaml:"rate_limit" desc:"Requests per second the instance sends at most: per_second (0, the default, for no limit) and burst; Stripe allows 100 per second in live mode and 25 in test mode" example:"{per_second: 20, burst: 40}"`
	// Toolsets selects the groups of tools the instance offers.
	Toolsets []string "yaml:\"toolsets\" desc:\"Groups of tools the instance offers: names from the list below, `default` for the type's defaults, `all` for every tool; empty for the defaults: customers (default), payments (default), billing (default), disputes (default), balance (default), search (default), catalog\" example:\"[default, catalog]\""
	// ReadOnly offers only the tools that read.
	ReadOnly bool `yaml:"read_only" default:"false" desc:"Offer only the tools that read"`
}

// Limits of the tools' pages: Stripe's own maximum is 100.
const (
	DefaultPage, MaxPage = stcore.DefaultPage, stcore.MaxPage
)

// The modes of Config.Mode.
const (
	ModeAny  = stcore.ModeAny
	ModeTest = stcore.ModeTest
	ModeLive = stcore.ModeLive
)

const credSecretKey = "secret_key"

// Toolsets are the type's groups of tools.
var Toolsets = []connectors.Toolset{
	{Name: "customers", Description: "Customers: find by e-mail, list, read, create", Default: true},
	{Name: "payments", Description: "Charges, payment intents and refunds", Default: true},
	{Name: "billing", Description: "Invoices (create, finalize, send) and subscriptions (update, cancel)", Default: true},
	{Name: "disputes", Description: "Disputes on the account's payments", Default: true},
	{Name: "balance", Description: "The account's balance", Default: true},
	{Name: "search", Description: "Stripe's search query language over customers, charges, payment intents, invoices, subscriptions, products and prices", Default: true},
	{Name: "catalog", Description: "Products and prices; payment links to them"},
}

func init() {
	connectors.Register(connectors.TypeOf(connectors.Info{
		Name:        "stripe",
		Description: "Stripe account: customers, payments and refunds, invoices and subscriptions, products, prices and payment links, disputes, balance and search, with a secret or restricted key",
		Credentials: []connectors.Credential{
			{Name: credSecretKey, Description: "Secret key (sk_live_..., sk_test_...) or, better, a restricted key (rk_live_..., rk_test_...) with the permissions of the toolsets offered: see the README", Required: true},
			{Name: "webhook_secret", Description: "Signing secret (whsec_...) of a webhook endpoint pointed at /hooks/<instance>: set, the instance receives its events (checked against Stripe-Signature) and offers events_list"},
		},
	}, New))
}

// Connector is one stripe instance.
type Connector struct {
	*stcore.Core
	cfg     Config
	catalog []connectors.Tool
	tools   []connectors.Tool
	selErr  error
}

// New builds an instance from its decoded config; Validate reports an
// invalid one.
func New(inst connectors.Instance, cfg *Config) (connectors.Connector, error) {
	kit := saas.New(inst, cfg.retries().Options("stripe", credSecretKey))
	hc := netguard.NewClient(netguard.Options{AllowPrivate: cfg.AllowPrivateNetworks, Timeout: time.Duration(cfg.Timeout) + time.Second, MaxRedirects: -1})
	c := &Connector{Core: stcore.New(kit, hc, cfg.BaseURL, cfg.Mode), cfg: *cfg}
	c.catalog = c.newTools()
	c.tools, c.selErr = connectors.SelectTools("stripe", Toolsets, cfg.Toolsets, cfg.ReadOnly, c.catalog)
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

// readChecks are the lists the connection test reads, with the
// permission of a restricted key each needs and the tools that need it.
var readChecks = []struct {
	path, permission string
	tools            []string
}{
	{"/v1/customers", "Customers read", []string{"get_customer", "list_customers", "create_customer", "create_invoice"}},
	{"/v1/charges", "Charges read", []string{"list_charges", "create_refund"}},
	{"/v1/payment_intents", "PaymentIntents read", []string{"list_payment_intents", "get_payment_intent"}},
	{"/v1/refunds", "Refunds read", []string{"create_refund"}},
	{"/v1/invoices", "Invoices read", []string{"list_invoices", "get_invoice", "create_invoice", "finalize_invoice", "send_invoice"}},
	{"/v1/subscriptions", "Subscriptions read", []string{"list_subscriptions", "get_subscription", "update_subscription", "cancel_subscription"}},
	{"/v1/disputes", "Disputes read", []string{"list_disputes", "get_dispute"}},
	{"/v1/products", "Products read", []string{"list_products", "create_product", "create_price"}},
	{"/v1/prices", "Prices read", []string{"list_prices", "create_price", "create_payment_link"}},
	{"/v1/payment_links", "Payment Links read", []string{"create_payment_link"}},
}

// Test reports the key's kind and mode (from its prefix), then reads the
// account (GET /v1/account) and the balance (GET /v1/balance), and lists
// one object of each kind the instance's toolsets read, to check the read
// permissions a restricted key needs. Write permissions cannot be checked
// without writing; the report says so. Each line goes through
// connectors.Reportf.
func (c *Connector) Test(ctx context.Context, creds connectors.Credentials) error {
	call := &connectors.Call{Tool: "test", Credentials: creds}
	key, err := c.Kit.Token(ctx, call)
	if err != nil {
		connectors.Reportf(ctx, "key: %v", err)
		return err
	}
	kind, mode := stcore.KeyKind(key)
	connectors.Reportf(ctx, "key: %s, %s mode (from its prefix); API version %s", kind, mode, stcore.APIVersion)
	if env := environmentOf(mode); env != "" {
		connectors.ReportEnvironment(ctx, env)
	}
	if err := c.CheckMode(key); err != nil {
		connectors.Reportf(ctx, "mode: %v", err)
		return err
	}
	if err := c.testAccount(ctx, call, mode); err != nil {
		return err
	}
	var failed error
	for _, p := range readChecks {
		needed := c.offered(p.tools)
		if needed == "" {
			continue
		}
		err := c.Get(ctx, call, p.path, url.Values{"limit": {"1"}}, &stcore.Page[struct{}]{})
		switch {
		case err == nil:
			connectors.Reportf(ctx, "GET %s?limit=1: ok    %s, needed by %s", p.path, p.permission, needed)
		case legate.CodeOf(err) == legate.CodePermissionDenied:
			connectors.Reportf(ctx, "GET %s?limit=1: MISSING %s, needed by %s", p.path, p.permission, needed)
			failed = errors.Join(failed, err)
		default:
			connectors.Reportf(ctx, "GET %s?limit=1: %v", p.path, err)
			return err
		}
	}
	var writes []string
	for _, t := range c.tools {
		if t.Class != legate.ClassRead {
			writes = append(writes, t.Name)
		}
	}
	if len(writes) > 0 {
		connectors.Reportf(ctx, "write permissions: not checked (it would write); a restricted key needs the write permission of each of %s", strings.Join(writes, ", "))
	}
	if failed != nil {
		return legate.Errorf(legate.CodePermissionDenied, "stripe: the key lacks permissions the tools need; see the report, and grant them to the restricted key or leave out the toolsets that need them")
	}
	return nil
}

// testAccount reads and reports the account and the balance.
func (c *Connector) testAccount(ctx context.Context, call *connectors.Call, mode string) error {
	var acct struct {
		ID              string `json:"id"`
		ChargesEnabled  bool   `json:"charges_enabled"`
		BusinessProfile *struct {
			Name string `json:"name"`
		} `json:"business_profile"`
	}
	err := c.Get(ctx, call, "/v1/account", nil, &acct)
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
	var bal balanceObject
	if err := c.Get(ctx, call, "/v1/balance", nil, &bal); err != nil {
		connectors.Reportf(ctx, "GET /v1/balance: %v", err)
		if legate.CodeOf(err) != legate.CodePermissionDenied {
			return err
		}
		return nil
	}
	var avail []string
	for _, a := range bal.Available {
		avail = append(avail, stcore.FormatMoney(a.Amount, a.Currency))
	}
	if len(avail) == 0 {
		avail = []string{"nothing"}
	}
	connectors.Reportf(ctx, "GET /v1/balance: ok, available %s, livemode %t", strings.Join(avail, ", "), bal.Livemode)
	if bal.Livemode != (mode == ModeLive) {
		connectors.Reportf(ctx, "mode: Stripe says livemode %t, the key's prefix says %s", bal.Livemode, mode)
	}
	return nil
}

// offered names those of tools the instance offers, "" for none.
func (c *Connector) offered(tools []string) string {
	var names []string
	for _, t := range c.tools {
		if slices.Contains(tools, t.Name) {
			names = append(names, t.Name)
		}
	}
	return strings.Join(names, ", ")
}

// AdapterVersion is the version of the stripe connector's own code.
const AdapterVersion = "1.0.0"

// Describe says what the instance speaks (the Stripe-Version it sends)
// and, when its mode accepts keys of one mode only, its environment.
func (c *Connector) Describe() connectors.Description {
	return connectors.Description{AdapterVersion: AdapterVersion, APIVersion: stcore.APIVersion, Environment: environmentOf(c.cfg.Mode)}
}

// environmentOf is the environment of a key's or config's mode.
func environmentOf(mode string) string {
	switch mode {
	case ModeTest:
		return connectors.EnvSandbox
	case ModeLive:
		return connectors.EnvProduction
	}
	return ""
}

var _ connectors.Connector = (*Connector)(nil)
var _ connectors.ToolCatalog = (*Connector)(nil)
var _ connectors.Describer = (*Connector)(nil)

// retries are the config's retry settings.
func (c Config) retries() saas.Retries {
	return saas.Retries{Timeout: time.Duration(c.Timeout), MaxAttempts: c.MaxAttempts, RetryBackoff: time.Duration(c.RetryBackoff),
		MaxRetryWait: time.Duration(c.MaxRetryWait), RateLimit: c.RateLimit}
}
