package saas

import (
	"net/url"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
)

// MaxAttempts is the most attempts per call a connector's config may ask.
const MaxAttempts = 10

// Retries are the retry settings every SaaS connector's config has, under
// the same keys: timeout, max_attempts, retry_backoff, max_retry_wait and
// rate_limit.
type Retries struct {
	Timeout      time.Duration
	MaxAttempts  int
	RetryBackoff time.Duration
	MaxRetryWait time.Duration
	RateLimit    httpkit.RateLimit
}

// Validate reports each setting out of range, by its config key.
func (r Retries) Validate() []error {
	var errs []error
	if r.Timeout <= 0 {
		errs = append(errs, legate.Invalid("timeout", "must be positive"))
	}
	if r.MaxAttempts < 1 || r.MaxAttempts > MaxAttempts {
		errs = append(errs, legate.Invalid("max_attempts", "must be between 1 and %d, got %d", MaxAttempts, r.MaxAttempts))
	}
	if r.RetryBackoff <= 0 {
		errs = append(errs, legate.Invalid("retry_backoff", "must be positive"))
	}
	if r.MaxRetryWait < 0 {
		errs = append(errs, legate.Invalid("max_retry_wait", "must not be negative"))
	}
	return append(errs, r.RateLimit.Validate("rate_limit")...)
}

// CheckURL checks the provider URL of config key field: http or https,
// with a host and no user, password, query or fragment, and (unless
// allowPrivate) a host that is no loopback, private or link-local
// address. It returns the URL parsed, nil when it is not one.
func CheckURL(field, raw string, allowPrivate bool) (*url.URL, []error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, []error{legate.Invalid(field, "must be an http or https URL, got %q", raw)}
	}
	var errs []error
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		errs = append(errs, legate.Invalid(field, "must hold no user, password, query or fragment"))
	}
	if !allowPrivate {
		if err := netguard.CheckHost(u.Host); err != nil {
			errs = append(errs, legate.Invalid(field, "%v", err))
		}
	}
	return u, errs
}

// Options returns the kit options of these settings for provider and its
// credential.
func (r Retries) Options(provider, credential string) Options {
	return Options{Provider: provider, Credential: credential, RateLimit: r.RateLimit, MaxAttempts: r.MaxAttempts,
		Base: r.RetryBackoff, MaxWait: r.MaxRetryWait, AttemptTimeout: r.Timeout}
}
