// Package webhook is the "webhook" connector: it POSTs signed JSON
// payloads to one fixed URL.
//
// Each call of its send tool is one delivery with one id, sent in the
// X-Legate-Delivery header on every attempt; the id is the call's
// OperationID, so that a retry by the gateway keeps it too. A delivery is
// retried with exponential backoff and jitter on 408, 425, 429, 5xx and
// network errors, honouring Retry-After, up to max_attempts. With a
// signing_secret credential every attempt carries
//
//	X-Legate-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
//
// signed afresh (so a retry is not refused as stale); a receiver checks it
// with [Verify]. Every connection goes through netguard: private and
// metadata addresses are refused unless allow_private_networks is set.
// Redirects are not followed: a POST must not turn into a GET elsewhere.
package webhook

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
)

// Limits of the configuration.
const (
	MaxAttemptsLimit     = 20
	MaxPayloadBytesLimit = 16 << 20
)

// Config is a webhook instance's configuration.
type Config struct {
	// URL receives every delivery.
	URL string `yaml:"url" required:"true" desc:"http or https URL every delivery is POSTed to" example:"https://hooks.example.com/legate"`
	// AllowPrivateNetworks lets the instance reach loopback, private and
	// link-local addresses.
	AllowPrivateNetworks bool `yaml:"allow_private_networks" default:"false" desc:"Allow loopback, private, link-local (cloud metadata) and other internal addresses; refused by default to prevent server-side request forgery"`
	// Timeout bounds one attempt.
	Timeout legate.Duration `yaml:"timeout" default:"10s" desc:"Time limit of one delivery attempt"`
	// MaxAttempts bounds the attempts of one delivery.
	MaxAttempts int `yaml:"max_attempts" default:"5" desc:"Attempts per delivery, the first included (1 to 20); retried on 408, 425, 429, 5xx and network errors"`
	// MaxPayloadBytes bounds the payload.
	MaxPayloadBytes int `yaml:"max_payload_bytes" default:"1048576" desc:"Largest payload accepted, in bytes of compact JSON (at most 16 MiB)"`
	// Headers are sent with every delivery.
	Headers map[string]string `yaml:"headers" desc:"Extra headers sent with every delivery (not secrets: a bearer token goes in the token credential)"`
	// RateLimit bounds the attempts the instance sends.
	RateLimit httpkit.RateLimit `yaml:"rate_limit" desc:"Attempts per second the instance sends at most, retries included: per_second (0, the default, for no limit) and burst (how many may go at once; 0 means 1). A delivery whose turn would come after its deadline fails with RATE_LIMITED and the wait" example:"{per_second: 10, burst: 20}"`
}

func init() {
	connectors.Register(connectors.TypeOf(connectors.Info{
		Name:        "webhook",
		Description: "POST signed JSON payloads to one fixed URL, retried with a stable delivery id",
		Credentials: []connectors.Credential{
			{Name: "signing_secret", Description: "HMAC-SHA256 key; when set, every attempt carries an X-Legate-Signature header the receiver verifies"},
			{Name: "token", Description: "Bearer token sent as Authorization: Bearer <token>, for receivers that require one"},
		},
	}, New))
}

// Connector is one webhook instance.
type Connector struct {
	id      string
	cfg     Config
	client  *http.Client
	limiter *httpkit.Limiter // nil: no limit
	tools   []connectors.Tool
}

// New builds an instance from its decoded config. An invalid configuration
// is reported by Validate, not here.
func New(inst connectors.Instance, cfg *Config) (connectors.Connector, error) {
	c := &Connector{id: inst.ID, cfg: *cfg, limiter: httpkit.NewLimiter("webhook", cfg.RateLimit)}
	c.client = netguard.NewClient(netguard.Options{
		AllowPrivate: cfg.AllowPrivateNetworks,
		Timeout:      time.Duration(cfg.Timeout),
		MaxRedirects: -1,
	})
	c.tools = []connectors.Tool{c.sendTool()}
	return c, nil
}

// Validate checks the configuration without I/O and reports every problem.
func (c *Connector) Validate() error {
	var errs []error
	if u, err := netguard.ParseURL(c.cfg.URL); err != nil {
		errs = append(errs, legate.Invalid("url", "%v", err))
	} else if !c.cfg.AllowPrivateNetworks {
		if err := netguard.CheckHost(u.Host); err != nil {
			errs = append(errs, legate.Invalid("url", "%v", err))
		}
	}
	if c.cfg.Timeout <= 0 {
		errs = append(errs, legate.Invalid("timeout", "must be positive"))
	}
	if c.cfg.MaxAttempts < 1 || c.cfg.MaxAttempts > MaxAttemptsLimit {
		errs = append(errs, legate.Invalid("max_attempts", "must be between 1 and %d, got %d", MaxAttemptsLimit, c.cfg.MaxAttempts))
	}
	if c.cfg.MaxPayloadBytes < 1 || c.cfg.MaxPayloadBytes > MaxPayloadBytesLimit {
		errs = append(errs, legate.Invalid("max_payload_bytes", "must be between 1 and %d (16 MiB), got %d", MaxPayloadBytesLimit, c.cfg.MaxPayloadBytes))
	}
	for name, value := range c.cfg.Headers {
		field := "headers." + name
		canon := http.CanonicalHeaderKey(name)
		switch {
		case !netguard.ValidHeaderName(name):
			errs = append(errs, legate.Invalid(field, "not a valid header name"))
		case netguard.ReservedHeader(name):
			errs = append(errs, legate.Invalid(field, "is managed by the transport and cannot be set"))
		case canon == "Authorization" || canon == "Cookie":
			errs = append(errs, legate.Invalid(field, "would carry a secret in plain configuration: use the token credential"))
		case strings.HasPrefix(canon, "X-Legate-"):
			errs = append(errs, legate.Invalid(field, "X-Legate-* headers are set by the connector"))
		case !netguard.ValidHeaderValue(value):
			errs = append(errs, legate.Invalid(field, "value holds control characters"))
		}
	}
	errs = append(errs, c.cfg.RateLimit.Validate("rate_limit")...)
	return errors.Join(errs...)
}

// Test checks that the URL answers, without delivering anything: it sends
// HEAD, and any answer below 500 counts as reachable (receivers commonly
// refuse HEAD or an unsigned request). The credentials must resolve.
func (c *Connector) Test(ctx context.Context, creds connectors.Credentials) error {
	u, err := netguard.ParseURL(c.cfg.URL)
	if err != nil {
		return legate.Errorf(legate.CodeInvalidArgument, "webhook: url %v", err)
	}
	if _, err := credential(ctx, creds, "signing_secret"); err != nil {
		return err
	}
	token, err := credential(ctx, creds, "token")
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u.String(), nil)
	if err != nil {
		return legate.Errorf(legate.CodeInvalidArgument, "webhook: %v", err)
	}
	c.setHeaders(req.Header, token)
	resp, err := c.client.Do(req)
	if err != nil {
		return httpkit.TransportError(ctx, err, "webhook")
	}
	httpkit.Drain(resp)
	if resp.StatusCode >= 500 {
		return legate.Errorf(legate.CodeTransient, "webhook: receiver answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return nil
}

// Tools lists the instance's one tool, send.
func (c *Connector) Tools() []connectors.Tool { return c.tools }

// Close releases the instance's idle connections.
func (c *Connector) Close() error {
	c.client.CloseIdleConnections()
	return nil
}

// credential resolves an optional credential: "" when not configured.
func credential(ctx context.Context, creds connectors.Credentials, name string) (string, error) {
	if creds == nil || !creds.Has(name) {
		return "", nil
	}
	v, err := creds.Get(ctx, name)
	if err != nil {
		return "", connectors.CredentialError("webhook", name, err)
	}
	return v, nil
}

// AdapterVersion is the version of the webhook connector's own code.
const AdapterVersion = "1.0.0"

// Describe says the connector's version; it speaks no provider's
// versioned API: deliveries are signed JSON POSTs of its own scheme.
func (c *Connector) Describe() connectors.Description {
	return connectors.Description{AdapterVersion: AdapterVersion}
}

var (
	_ connectors.Connector = (*Connector)(nil)
	_ connectors.Closer    = (*Connector)(nil)
	_ connectors.Describer = (*Connector)(nil)
)
