package stcore

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/connectors/saas"
)

// The modes of the config's mode.
const (
	ModeAny  = "any"
	ModeTest = "test"
	ModeLive = "live"
)

// Core is what an instance's tools share.
type Core struct {
	// Kit is the instance's SaaS kit.
	Kit  *saas.Kit
	hc   *http.Client
	base string // base_url without its trailing slash
	mode string
}

// New returns the core of an instance on the guarded client hc, whose
// transport it wraps to see each answer's status and Retry-After. One
// client serves the instance: the key is passed with each request,
// resolved per call, and the kit's loop, which knows the call's deadline
// and its idempotency key, is the only one that retries.
func New(kit *saas.Kit, hc *http.Client, baseURL, mode string) *Core {
	hc.Transport = &recorder{next: hc.Transport}
	return &Core{Kit: kit, hc: hc, base: strings.TrimRight(baseURL, "/"), mode: mode}
}

// Get reads path into v through the kit, with params (nil for none) in
// its query.
func (c *Core) Get(ctx context.Context, call *connectors.Call, path string, params url.Values, v any) error {
	return c.Kit.Read(ctx, call, func(ctx context.Context, key string) error {
		return c.Send(ctx, Request{Method: http.MethodGet, Path: path, Params: params}, key, v)
	})
}

// Send makes one request with key, its error canonical; a key of the
// other mode than the instance's is refused unsent.
func (c *Core) Send(ctx context.Context, r Request, key string, v any) error {
	if err := c.CheckMode(key); err != nil {
		return err
	}
	ctx, ans := withAnswer(ctx)
	return mapError(ctx, ans, c.do(ctx, r, key, v))
}

// CheckMode refuses a key of the other mode than the instance's.
func (c *Core) CheckMode(key string) error {
	if c.mode == ModeAny || c.mode == "" {
		return nil
	}
	if _, mode := KeyKind(key); mode != c.mode {
		return legate.Errorf(legate.CodePermissionDenied, "stripe: this instance takes %s-mode keys only, and its secret_key is a %s-mode key; give it a %s-mode key or change its mode", c.mode, mode, c.mode)
	}
	return nil
}

// KeyKind tells a key's kind and mode from its prefix, never quoting it.
func KeyKind(key string) (kind, mode string) {
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

// answer is what the transport saw of one attempt's response: its status
// and Retry-After, which an error body that is not Stripe's does not carry.
type answer struct {
	status     int
	retryAfter time.Duration
}

type answerKey struct{}

// withAnswer returns ctx carrying a new answer for the recorder to fill.
func withAnswer(ctx context.Context) (context.Context, *answer) {
	a := &answer{}
	return context.WithValue(ctx, answerKey{}, a), a
}

// recorder fills the answer of the request's context, if any.
type recorder struct{ next http.RoundTripper }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err == nil {
		if a, ok := req.Context().Value(answerKey{}).(*answer); ok {
			a.status = resp.StatusCode
			a.retryAfter, _ = netguard.RetryAfter(resp.Header, time.Now())
		}
	}
	return resp, err
}

// mapError makes an error of a request canonical. ctx is the attempt's,
// ans what its transport saw.
func mapError(ctx context.Context, ans *answer, err error) error {
	if err == nil {
		return nil
	}
	var se *apiError
	if errors.As(err, &se) {
		status := se.HTTPStatusCode
		switch {
		case status == http.StatusUnauthorized:
			// Stripe's message quotes part of the key: not passed on.
			return saas.StatusError("stripe", status, 0, "Stripe refused the secret key (401): it is wrong, expired or revoked")
		case se.Type == errorTypeIdempotency:
			return &legate.Error{Code: legate.CodeConflict, Message: "stripe: Stripe holds another request under this call's idempotency key: " + se.Msg}
		case se.Code == errorCodeRateLimit && status != http.StatusTooManyRequests:
			return saas.RateLimited("stripe", ans.retryAfter)
		}
		msg := "Stripe answered " + strconv.Itoa(status)
		if se.Code != "" {
			msg += " " + se.Code
		}
		if se.Msg != "" {
			msg += ": " + se.Msg
		}
		return saas.StatusError("stripe", status, ans.retryAfter, msg)
	}
	switch {
	case ans.status >= 400:
		return saas.StatusError("stripe", ans.status, ans.retryAfter, "Stripe answered "+strconv.Itoa(ans.status)+" without a Stripe error in the body")
	case errors.Is(err, errNotJSON):
		// The decoder's message may quote the body: not passed on.
		return saas.Mapping("stripe", "a %d answer whose body is not the JSON expected", ans.status)
	}
	return saas.Classify(ctx, err, "stripe")
}

var _ http.RoundTripper = (*recorder)(nil)
