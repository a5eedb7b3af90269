package saas

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/telemetry/spans"
)

// Defaults of [Options].
const (
	DefaultMaxAttempts    = 3
	DefaultMaxElapsed     = 30 * time.Second
	DefaultMaxWait        = 10 * time.Second
	DefaultAttemptTimeout = 20 * time.Second
	DefaultLease          = 2 * time.Minute
)

// Options configure a [Kit]. Only Provider and Credential are required.
type Options struct {
	// Provider names the provider in every error message: "slack".
	Provider string
	// Credential is the name of the credential each call resolves and
	// hands to the provider function: "bot_token".
	Credential string
	// RateLimit is the instance's own rate limit, usually a `rate_limit`
	// field of its Config.
	RateLimit httpkit.RateLimit
	// MaxAttempts bounds the attempts of one call (default 3; 1 never retries).
	MaxAttempts int
	// MaxElapsed bounds the time one call spends waiting between attempts
	// (default 30s).
	MaxElapsed time.Duration
	// Base is the first backoff (default httpkit.DefaultBase); it doubles
	// per attempt, with jitter.
	Base time.Duration
	// MaxWait is the longest wait between attempts, Retry-After included
	// (default 10s): a provider asking for more gets RATE_LIMITED returned
	// with its wait, not waited.
	MaxWait time.Duration
	// AttemptTimeout bounds one attempt (default 20s), so that a provider
	// that does not answer leaves time to reconcile and retry.
	AttemptTimeout time.Duration
	// Lease is how long a write holds its idempotency key before another
	// attempt may take it over (default 2m); keep it above the gateway's
	// call timeout.
	Lease time.Duration
	// Exchange, when set, turns the resolved credential into the token
	// each attempt hands fn: an OAuth2 access token got with a refresh
	// token. expired is "" for the token to use now (one the connector
	// holds while it is valid), or the token an attempt was just refused
	// with (AUTH_EXPIRED): return another, got afresh unless the connector
	// holds a newer one already. Its error is canonical (see [Classify]);
	// Do retries it as it retries fn's, and masks the credential and the
	// token out of every error.
	Exchange func(ctx context.Context, call *connectors.Call, credential, expired string) (string, error)
	// Markers says the operator turned markers on (a connector's `markers`
	// field): a write then leaves the marker of its operation in what it
	// creates (a hidden comment, a metadata field) for Find to match.
	// Off, the default, a write leaves nothing of Legate's in the user's
	// data and Find matches on content and time instead.
	Markers bool
	// Masked names the instance's other credentials that its calls use
	// beside Credential (an OAuth client's secret): Do masks their values
	// out of every error too, resolving them only when there is one.
	Masked []string
}

// Kit is one connector instance's share of the toolkit: its retry policy,
// rate limiter, signing key fallback and operation record fallback. Build
// one in the connector's New and keep it for the instance's life; it is
// safe for concurrent use.
type Kit struct {
	instance string
	opts     Options
	limiter  *httpkit.Limiter
	retry    httpkit.Retry
	ownKey   []byte
	macs     sync.Pool // of *keyedMAC (sign.go)
	memory   *MemoryOperations
	// masks is the mask set of the credential value last resolved:
	// building one derives every encoded form of the value, which costs
	// more than a fast provider's answer, so calls with the same value
	// share it.
	masks atomic.Pointer[masks]
}

type masks struct {
	value string
	set   *legate.Secrets
}

// secrets returns the mask set of the credential value token.
func (k *Kit) secrets(token string) *legate.Secrets {
	if m := k.masks.Load(); m != nil && subtle.ConstantTimeCompare([]byte(m.value), []byte(token)) == 1 {
		return m.set
	}
	set := legate.NewSecrets(token)
	k.masks.Store(&masks{value: token, set: set})
	return set
}

// New returns the kit of instance inst.
func New(inst connectors.Instance, opts Options) *Kit {
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.MaxElapsed <= 0 {
		opts.MaxElapsed = DefaultMaxElapsed
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = DefaultMaxWait
	}
	if opts.AttemptTimeout <= 0 {
		opts.AttemptTimeout = DefaultAttemptTimeout
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	k := &Kit{
		instance: inst.ID,
		opts:     opts,
		limiter:  httpkit.NewLimiter(opts.Provider, opts.RateLimit),
		retry:    httpkit.Retry{Base: opts.Base, MaxWait: opts.MaxWait},
		ownKey:   make([]byte, 32),
		memory:   NewMemoryOperations(),
	}
	rand.Read(k.ownKey)
	return k
}

// Instance returns the id of the kit's instance.
func (k *Kit) Instance() string { return k.instance }

// Markers reports whether writes leave their marker in what they create
// (Options.Markers).
func (k *Kit) Markers() bool { return k.opts.Markers }

// Provider returns the provider name errors start with.
func (k *Kit) Provider() string { return k.opts.Provider }

// Token resolves the kit's credential for call, for a connection test or
// a client built outside [Kit.Read]. Its error is AUTH_EXPIRED and names
// the credential, never a value.
func (k *Kit) Token(ctx context.Context, call *connectors.Call) (string, error) {
	if call.Credentials == nil {
		return "", connectors.CredentialError(k.opts.Provider, k.opts.Credential, connectors.ErrNoCredential)
	}
	v, err := call.Credentials.Get(ctx, k.opts.Credential)
	if err != nil {
		return "", connectors.CredentialError(k.opts.Provider, k.opts.Credential, err)
	}
	if v == "" {
		return "", connectors.CredentialError(k.opts.Provider, k.opts.Credential, errors.New("empty"))
	}
	return v, nil
}

// Read runs fn, one provider call that changes nothing, with the
// credential: see [Kit.Do].
func (k *Kit) Read(ctx context.Context, call *connectors.Call, fn func(ctx context.Context, token string) error) error {
	return k.Do(ctx, call, func(ctx context.Context, token string, _ int) error { return fn(ctx, token) })
}

// Do runs fn until it succeeds or fails for good, at most
// Options.MaxAttempts times, each within Options.AttemptTimeout and after
// the instance's rate limiter; attempt counts from 1. fn returns nil or a
// canonical error (see [Classify]); Do then:
//
//   - RATE_LIMITED: waits its RetryAfter (or a backoff) and tries again,
//     unless the wait passes MaxWait, MaxElapsed or the call's deadline:
//     then it returns the error, RetryAfter kept, for the client to wait;
//   - TRANSIENT, TIMEOUT: waits a backoff with jitter and tries again;
//   - AUTH_EXPIRED: resolves the credential once more (a rotated or
//     refreshed secret) and, if it changed, tries once more with it;
//     with Options.Exchange, a token the provider refused is exchanged
//     for a new one (an expired OAuth2 access token is refreshed) and
//     tried once more, whether or not the credential changed;
//   - anything else: returns it.
//
// Reads run so; writes go through [WriteOnce], which runs its attempts
// through Do. Every error returned is canonical and its texts hold no
// credential value.
func (k *Kit) Do(ctx context.Context, call *connectors.Call, fn func(ctx context.Context, token string, attempt int) error) error {
	cred, err := k.Token(ctx, call)
	if err != nil {
		return err
	}
	token, expired := cred, ""
	used := []string{cred} // every credential and token of the call, to mask
	// Secrets are only needed to mask an error: built then. A call that
	// used the credential alone shares the kit's mask set of its value.
	secrets := func() *legate.Secrets {
		if k.opts.Exchange == nil && len(k.opts.Masked) == 0 && len(used) == 1 {
			return k.secrets(cred)
		}
		values := append(append([]string{}, used...), token)
		for _, name := range k.opts.Masked {
			if v, err := call.Credentials.Get(ctx, name); err == nil {
				values = append(values, v)
			}
		}
		return legate.NewSecrets(values...)
	}
	start := time.Now()
	refreshed := false
	attempt := 1
	defer func() { spans.Set(ctx, "attempts", strconv.Itoa(attempt)) }()
	for ; ; attempt++ {
		if err := k.limiter.Wait(ctx); err != nil {
			return k.finalError(ctx, err, secrets())
		}
		actx, cancel := context.WithTimeout(ctx, k.opts.AttemptTimeout)
		refused := false // the provider refused token, not the exchange the credential
		err = nil
		if k.opts.Exchange != nil {
			token, err = k.opts.Exchange(actx, call, cred, expired)
		}
		if err == nil {
			err = fn(actx, token, attempt)
			refused = true
		}
		if err == nil {
			cancel()
			return nil
		}
		le := k.classify(actx, err, secrets())
		cancel()
		if ctx.Err() != nil {
			return k.finalError(ctx, le, secrets())
		}
		if le.Code == legate.CodeAuthExpired {
			if refreshed {
				return le
			}
			// One refresh: the credential may have been rotated since it
			// was read, or the token exchanged for it may have expired. The
			// attempt with the new one is not counted.
			refreshed = true
			fresh, terr := k.Token(ctx, call)
			if terr != nil {
				if legate.CodeOf(terr) == legate.CodeNotConnected {
					return terr // the caller's connection expired: connecting is the remedy
				}
				return le
			}
			used = append(used, token, fresh)
			switch {
			case k.opts.Exchange != nil && refused:
				expired = token
			case fresh == cred:
				return le
			default:
				expired = ""
			}
			cred = fresh
			if k.opts.Exchange == nil {
				token = cred
			}
			call.Retry("auth")
			attempt--
			continue
		}
		if attempt >= k.opts.MaxAttempts {
			return le
		}
		var wait time.Duration
		switch le.Code {
		case legate.CodeRateLimited:
			wait = le.RetryAfter
			if wait <= 0 {
				wait = k.retry.Backoff(attempt)
			}
		case legate.CodeTransient, legate.CodeTimeout:
			wait = k.retry.Backoff(attempt)
		default:
			return le
		}
		if wait > k.opts.MaxWait || time.Since(start)+wait > k.opts.MaxElapsed {
			return le
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return le
		}
		if err := sleep(ctx, wait); err != nil {
			return le
		}
		call.Retry(reason(le.Code))
	}
}

// classify makes err canonical and masks the credential out of it.
func (k *Kit) classify(ctx context.Context, err error, secrets *legate.Secrets) *legate.Error {
	le := Classify(ctx, err, k.opts.Provider)
	masked := *le
	masked.Message = secrets.MaskString(masked.Message)
	if masked.Err != nil {
		masked.Err = errors.New(secrets.MaskString(masked.Err.Error()))
	}
	return &masked
}

// finalError is the error of a call that ends on err: a cancelled or
// timed-out call says so.
func (k *Kit) finalError(ctx context.Context, err error, secrets *legate.Secrets) *legate.Error {
	le := k.classify(ctx, err, secrets)
	if ctx.Err() != nil && le.Code != legate.CodeTimeout {
		return k.classify(ctx, ctx.Err(), secrets)
	}
	return le
}

func reason(c legate.Code) string {
	switch c {
	case legate.CodeRateLimited:
		return "429"
	case legate.CodeTimeout:
		return "timeout"
	}
	return "transient"
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
