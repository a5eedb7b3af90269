package saas_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/saas"
)

const token = "xoxb-canary-7f1c9a2b"

func newKit(id string, opts saas.Options) *saas.Kit {
	if opts.Provider == "" {
		opts.Provider = "acme"
	}
	if opts.Credential == "" {
		opts.Credential = "token"
	}
	if opts.Base == 0 {
		opts.Base = time.Millisecond
	}
	return saas.New(connectors.Instance{ID: id}, opts)
}

func newCall(tool, tenant string) *connectors.Call {
	return &connectors.Call{Tool: tool, Caller: connectors.Caller{Tenant: tenant},
		Credentials: connectortest.Creds{"token": token}, OperationID: "op-1"}
}

func wantCode(t *testing.T, err error, code legate.Code) *legate.Error {
	t.Helper()
	var le *legate.Error
	if !errors.As(err, &le) || le.Code != code {
		t.Fatalf("error %v; want %s", err, code)
	}
	return le
}

func TestDoRetries(t *testing.T) {
	tests := map[string]struct {
		errs     []error // one per attempt; nil succeeds
		attempts int
		code     legate.Code // "" for success
	}{
		"429 then success":       {[]error{saas.RateLimited("acme", 5*time.Millisecond), nil}, 2, ""},
		"429 with no wait":       {[]error{saas.RateLimited("acme", 0), nil}, 2, ""},
		"500 twice then success": {[]error{saas.StatusError("acme", 500, 0, "boom"), saas.StatusError("acme", 503, 0, "busy"), nil}, 3, ""},
		"timeout then success":   {[]error{context.DeadlineExceeded, nil}, 2, ""},
		"network then success":   {[]error{&net.OpError{Op: "read", Err: errors.New("connection reset")}, nil}, 2, ""},
		"bounded attempts":       {[]error{saas.StatusError("acme", 500, 0, "a"), saas.StatusError("acme", 500, 0, "b"), saas.StatusError("acme", 500, 0, "c"), nil}, 3, legate.CodeTransient},
		"403 is not retried":     {[]error{saas.StatusError("acme", 403, 0, "no scope"), nil}, 1, legate.CodePermissionDenied},
		"404 is not retried":     {[]error{saas.StatusError("acme", 404, 0, "gone"), nil}, 1, legate.CodeNotFound},
		"409 is not retried":     {[]error{saas.StatusError("acme", 409, 0, "changed"), nil}, 1, legate.CodeConflict},
		"mapping is not retried": {[]error{saas.Mapping("acme", "no id"), nil}, 1, legate.CodeAdapterMapping},
		"a Retry-After past MaxWait is returned, not waited": {[]error{saas.RateLimited("acme", time.Hour), nil}, 1, legate.CodeRateLimited},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			k := newKit("acme", saas.Options{})
			call := newCall("read", "t1")
			var retries []string
			call.Retried = func(r string) { retries = append(retries, r) }
			n := 0
			err := k.Do(t.Context(), call, func(ctx context.Context, tok string, attempt int) error {
				n++
				if tok != token || attempt != n {
					t.Errorf("attempt %d got token %q, attempt %d", n, tok, attempt)
				}
				return tc.errs[n-1]
			})
			if n != tc.attempts || len(retries) != n-1 {
				t.Errorf("%d attempts, %d retries told; want %d attempts", n, len(retries), tc.attempts)
			}
			if tc.code == "" {
				if err != nil {
					t.Fatalf("err %v", err)
				}
				return
			}
			le := wantCode(t, err, tc.code)
			if tc.code == legate.CodeRateLimited && le.RetryAfter != time.Hour {
				t.Errorf("RetryAfter %v; want the provider's hour", le.RetryAfter)
			}
		})
	}
}

func TestDoWaitsRetryAfter(t *testing.T) {
	k := newKit("acme", saas.Options{})
	n := 0
	start := time.Now()
	err := k.Do(t.Context(), newCall("read", ""), func(context.Context, string, int) error {
		if n++; n == 1 {
			return saas.RateLimited("acme", 30*time.Millisecond)
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Fatalf("err %v after %d attempts", err, n)
	}
	// A lower bound only: the wait asked was waited, at least.
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("second attempt after %v; Retry-After asked 30ms", d)
	}
}

func TestDoAttemptTimeout(t *testing.T) {
	k := newKit("acme", saas.Options{AttemptTimeout: 20 * time.Millisecond})
	n := 0
	err := k.Do(t.Context(), newCall("read", ""), func(ctx context.Context, _ string, _ int) error {
		if n++; n == 1 {
			<-ctx.Done() // a provider that never answers
			return ctx.Err()
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Fatalf("err %v after %d attempts", err, n)
	}
}

// countingCreds returns the values in turn, one per Get.
type countingCreds struct {
	values []string
	gets   atomic.Int32
}

func (c *countingCreds) Get(context.Context, string) (string, error) {
	i := int(c.gets.Add(1)) - 1
	return c.values[min(i, len(c.values)-1)], nil
}
func (c *countingCreds) Has(string) bool { return true }

func TestDoRefreshesTheCredentialOnce(t *testing.T) {
	t.Run("a rotated credential is used", func(t *testing.T) {
		creds := &countingCreds{values: []string{"old-secret", "new-secret"}}
		call := newCall("read", "")
		call.Credentials = creds
		var seen []string
		err := newKit("acme", saas.Options{MaxAttempts: 1}).Do(t.Context(), call, func(_ context.Context, tok string, _ int) error {
			seen = append(seen, tok)
			if tok == "old-secret" {
				return saas.StatusError("acme", 401, 0, "invalid_auth")
			}
			return nil
		})
		if err != nil || strings.Join(seen, ",") != "old-secret,new-secret" {
			t.Fatalf("err %v, tokens %v", err, seen)
		}
	})
	t.Run("an unchanged or still refused credential is AUTH_EXPIRED", func(t *testing.T) {
		for _, values := range [][]string{{"same"}, {"one", "two", "three"}} {
			creds := &countingCreds{values: values}
			call := newCall("read", "")
			call.Credentials = creds
			n := 0
			err := newKit("acme", saas.Options{}).Do(t.Context(), call, func(context.Context, string, int) error {
				n++
				return saas.StatusError("acme", 401, 0, "invalid_auth")
			})
			wantCode(t, err, legate.CodeAuthExpired)
			if creds.gets.Load() != 2 || n != min(len(values), 2) {
				t.Errorf("values %v: %d reads of the credential, %d attempts; want 2 reads", values, creds.gets.Load(), n)
			}
		}
	})
	t.Run("both the old and the new credential are masked", func(t *testing.T) {
		creds := &countingCreds{values: []string{"old-secret-a1b2c3", "new-secret-d4e5f6"}}
		call := newCall("read", "")
		call.Credentials = creds
		err := newKit("acme", saas.Options{}).Do(t.Context(), call, func(_ context.Context, tok string, _ int) error {
			if strings.HasPrefix(tok, "old") {
				return saas.StatusError("acme", 401, 0, "invalid_auth")
			}
			return saas.StatusError("acme", 403, 0, "no scope for old-secret-a1b2c3 nor new-secret-d4e5f6")
		})
		le := wantCode(t, err, legate.CodePermissionDenied)
		if strings.Contains(le.Message, "a1b2c3") || strings.Contains(le.Message, "d4e5f6") {
			t.Errorf("message %q holds a credential", le.Message)
		}
	})
	t.Run("a credential the instance does not configure is CONFIG_ERROR before any call", func(t *testing.T) {
		call := newCall("read", "")
		call.Credentials = connectortest.Creds{}
		err := newKit("acme", saas.Options{}).Do(t.Context(), call, func(context.Context, string, int) error {
			t.Fatal("called without a credential")
			return nil
		})
		if le := wantCode(t, err, legate.CodeConfigError); !strings.Contains(le.Message, "token") {
			t.Errorf("message %q does not name the credential", le.Message)
		}
	})
}

func TestDoMasksTheCredential(t *testing.T) {
	k := newKit("acme", saas.Options{})
	err := k.Do(t.Context(), newCall("read", ""), func(context.Context, string, int) error {
		return &legate.Error{Code: legate.CodeInvalidArgument, Message: "acme: bad request with " + token, Err: errors.New("raw " + token)}
	})
	le := wantCode(t, err, legate.CodeInvalidArgument)
	if strings.Contains(le.Message, "7f1c9a2b") || strings.Contains(le.Err.Error(), "7f1c9a2b") || !strings.Contains(le.Message, legate.Redacted) {
		t.Errorf("error %q / %q holds the credential", le.Message, le.Err)
	}
}

// The kit keeps the mask set of the credential's value across calls: a
// rotated value is masked from its first call, and so is the old one
// again.
func TestDoMasksTheCredentialAfterARotation(t *testing.T) {
	k := newKit("acme", saas.Options{})
	for _, value := range []string{"first-7f1c9a2b", "first-7f1c9a2b", "second-5e0d3c4a", "first-7f1c9a2b"} {
		call := newCall("read", "")
		call.Credentials = connectortest.Creds{"token": value}
		err := k.Do(t.Context(), call, func(context.Context, string, int) error {
			return &legate.Error{Code: legate.CodeInvalidArgument, Message: "acme: bad request with " + value}
		})
		if le := wantCode(t, err, legate.CodeInvalidArgument); strings.Contains(le.Message, value) || !strings.Contains(le.Message, legate.Redacted) {
			t.Fatalf("value %s: message %q", value, le.Message)
		}
	}
}

func TestDoRateLimiter(t *testing.T) {
	// One request per hour, burst one: the second call waits past the
	// call's deadline, so it is refused RATE_LIMITED at once.
	k := newKit("acme", saas.Options{RateLimit: httpkitRate(1.0 / 3600)})
	fn := func(context.Context, string, int) error { return nil }
	if err := k.Do(t.Context(), newCall("read", ""), fn); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	wantCode(t, k.Do(ctx, newCall("read", ""), fn), legate.CodeRateLimited)
}

func TestClassify(t *testing.T) {
	var syntax error = &jsonSyntax{}
	tests := map[string]struct {
		err  error
		code legate.Code
	}{
		"coded":      {saas.StatusError("acme", 409, 0, "x"), legate.CodeConflict},
		"bad json":   {syntax, legate.CodeAdapterMapping},
		"deadline":   {context.DeadlineExceeded, legate.CodeTimeout},
		"reset":      {&net.OpError{Op: "read", Err: errors.New("reset")}, legate.CodeTransient},
		"status 401": {saas.StatusError("acme", 401, 0, "x"), legate.CodeAuthExpired},
		"status 500": {saas.StatusError("acme", 500, 0, "x"), legate.CodeTransient},
		"status 429": {saas.StatusError("acme", 429, time.Second, "x"), legate.CodeRateLimited},
		"status 301": {saas.StatusError("acme", 301, 0, "x"), legate.CodeAdapterMapping},
		"status 400": {saas.StatusError("acme", 400, 0, "x"), legate.CodeInvalidArgument},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			le := saas.Classify(t.Context(), tc.err, "acme")
			if le.Code != tc.code || !strings.HasPrefix(le.Message, "acme: ") {
				t.Errorf("%v; want %s, message starting acme:", le, tc.code)
			}
		})
	}
	if le := saas.StatusError("acme", 429, 3*time.Second, "slow down"); le.RetryAfter != 3*time.Second {
		t.Errorf("429 RetryAfter %v", le.RetryAfter)
	}
}

// exchanger hands out access tokens for a credential, a new one each time
// it is asked to replace the one it holds, as an OAuth2 token endpoint does.
type exchanger struct {
	issued   []string
	current  string
	refusals int // how many exchanges to refuse with AUTH_EXPIRED
}

func (x *exchanger) exchange(_ context.Context, _ *connectors.Call, cred, expired string) (string, error) {
	if x.refusals > 0 {
		x.refusals--
		return "", saas.StatusError("acme", 401, 0, "invalid_grant for "+cred)
	}
	if x.current == "" || expired == x.current {
		x.current = fmt.Sprintf("access-%d-of-%s", len(x.issued)+1, cred)
		x.issued = append(x.issued, x.current)
	}
	return x.current, nil
}

func TestDoExchangesAnExpiredToken(t *testing.T) {
	t.Run("a refused token is exchanged once and the call succeeds", func(t *testing.T) {
		x := &exchanger{}
		k := newKit("acme", saas.Options{MaxAttempts: 1, Exchange: x.exchange})
		var seen []string
		var retries []string
		call := newCall("read", "")
		call.Retried = func(r string) { retries = append(retries, r) }
		err := k.Do(t.Context(), call, func(_ context.Context, tok string, _ int) error {
			seen = append(seen, tok)
			if tok == "access-1-of-"+token {
				return saas.StatusError("acme", 401, 0, "expired")
			}
			return nil
		})
		want := "access-1-of-" + token + ",access-2-of-" + token
		if err != nil || strings.Join(seen, ",") != want || strings.Join(retries, ",") != "auth" {
			t.Fatalf("err %v, tokens %v, retries %v; want %s", err, seen, retries, want)
		}
		// The next call uses the token held, without exchanging again.
		seen = nil
		if err := k.Do(t.Context(), newCall("read", ""), func(_ context.Context, tok string, _ int) error {
			seen = append(seen, tok)
			return nil
		}); err != nil || len(x.issued) != 2 || seen[0] != "access-2-of-"+token {
			t.Fatalf("err %v, issued %v, used %v", err, x.issued, seen)
		}
	})
	t.Run("a new token refused too is AUTH_EXPIRED, masked", func(t *testing.T) {
		x := &exchanger{}
		n := 0
		err := newKit("acme", saas.Options{Exchange: x.exchange}).Do(t.Context(), newCall("read", ""), func(_ context.Context, tok string, _ int) error {
			n++
			return saas.StatusError("acme", 401, 0, "refused "+tok)
		})
		le := wantCode(t, err, legate.CodeAuthExpired)
		if n != 2 || len(x.issued) != 2 || strings.Contains(le.Message, "access-") {
			t.Fatalf("%d attempts, %d tokens, message %q; want 2, 2 and the token masked", n, len(x.issued), le.Message)
		}
	})
	t.Run("a refused exchange with an unchanged credential is AUTH_EXPIRED, masked", func(t *testing.T) {
		x := &exchanger{refusals: 5}
		err := newKit("acme", saas.Options{Exchange: x.exchange}).Do(t.Context(), newCall("read", ""), func(context.Context, string, int) error {
			t.Fatal("called without a token")
			return nil
		})
		le := wantCode(t, err, legate.CodeAuthExpired)
		if x.refusals != 4 || strings.Contains(le.Message, "7f1c9a2b") {
			t.Fatalf("%d exchanges, message %q; want one, the credential masked", 5-x.refusals, le.Message)
		}
	})
	t.Run("a transient exchange failure is retried", func(t *testing.T) {
		fails := 1
		exchange := func(context.Context, *connectors.Call, string, string) (string, error) {
			if fails > 0 {
				fails--
				return "", saas.StatusError("acme", 503, 0, "busy")
			}
			return "access", nil
		}
		err := newKit("acme", saas.Options{Exchange: exchange}).Do(t.Context(), newCall("read", ""), func(_ context.Context, tok string, _ int) error {
			if tok != "access" {
				t.Errorf("token %q", tok)
			}
			return nil
		})
		if err != nil || fails != 0 {
			t.Fatalf("err %v", err)
		}
	})
}

func TestDoMasksEveryCredentialOfTheCall(t *testing.T) {
	x := &exchanger{}
	k := newKit("acme", saas.Options{Exchange: x.exchange, Masked: []string{"client_secret", "absent"}})
	call := newCall("read", "")
	call.Credentials = connectortest.Creds{"token": token, "client_secret": "s3cret-canary"}
	err := k.Do(t.Context(), call, func(_ context.Context, tok string, _ int) error {
		// The provider echoes every secret, the first token included.
		return saas.StatusError("acme", 401, 0, strings.Join([]string{token, "s3cret-canary", "access-1-of-" + token, tok}, " "))
	})
	le := wantCode(t, err, legate.CodeAuthExpired)
	for _, secret := range []string{"7f1c9a2b", "s3cret-canary", "access-"} {
		if strings.Contains(le.Message, secret) {
			t.Errorf("message %q holds %s", le.Message, secret)
		}
	}
}
