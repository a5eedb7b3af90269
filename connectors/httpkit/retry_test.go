package httpkit_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/httpkit"
	"github.com/legate-mcp/legate/connectors/netguard"
)

// server answers attempt i (from 0) with answer(i, w); it records when
// each attempt arrived.
type server struct {
	*httptest.Server
	mu sync.Mutex
	at []time.Time
}

func newServer(t *testing.T, answer func(i int, w http.ResponseWriter)) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		i := len(s.at)
		s.at = append(s.at, time.Now())
		s.mu.Unlock()
		answer(i, w)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) attempts() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.at...)
}

var client = netguard.NewClient(netguard.Options{AllowPrivate: true, Timeout: 5 * time.Second})

// do sends method to url under p, with an Idempotency-Key when key is set.
func do(ctx context.Context, p *httpkit.Retry, method, url, key string) (*http.Response, int, error) {
	return p.Do(ctx, client, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(`{"n":1}`))
		if key != "" && err == nil {
			req.Header.Set("Idempotency-Key", key)
		}
		return req, err
	})
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	tests := map[string]func() string{
		"seconds": func() string { return "1" },
		// An HTTP date has whole seconds: two from now is more than one.
		"http date": func() string { return time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat) },
	}
	for name, retryAfter := range tests {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t, func(i int, w http.ResponseWriter) {
				if i == 0 {
					w.Header().Set("Retry-After", retryAfter())
					w.WriteHeader(http.StatusTooManyRequests)
				}
			})
			var reasons []string
			p := &httpkit.Retry{MaxAttempts: 3, Base: time.Millisecond, OnRetry: func(r string) { reasons = append(reasons, r) }}
			resp, n, err := do(t.Context(), p, http.MethodPost, srv.URL, "")
			if err != nil || resp.StatusCode != 200 || n != 2 {
				t.Fatalf("resp %v, attempts %d, err %v", resp, n, err)
			}
			httpkit.Drain(resp)
			at := srv.attempts()
			if wait := at[1].Sub(at[0]); wait < 900*time.Millisecond {
				t.Errorf("waited %v; Retry-After asks about a second or more", wait)
			}
			if len(reasons) != 1 || reasons[0] != "429" {
				t.Errorf("retries told %v", reasons)
			}
		})
	}
}

func TestRetryGivesUp(t *testing.T) {
	tests := map[string]struct {
		retry    httpkit.Retry
		status   int
		header   string // Retry-After
		ctx      time.Duration
		attempts int
	}{
		"5xx until the attempts run out":  {httpkit.Retry{MaxAttempts: 3, Base: time.Millisecond}, 503, "", 0, 3},
		"one attempt by default":          {httpkit.Retry{}, 503, "", 0, 1},
		"not retryable":                   {httpkit.Retry{MaxAttempts: 3, Base: time.Millisecond}, 400, "", 0, 1},
		"501 will not change":             {httpkit.Retry{MaxAttempts: 3, Base: time.Millisecond}, 501, "", 0, 1},
		"Retry-After over MaxWait":        {httpkit.Retry{MaxAttempts: 3, MaxWait: time.Second}, 429, "120", 0, 1},
		"next wait passes the deadline":   {httpkit.Retry{MaxAttempts: 3, Base: 5 * time.Second}, 503, "", 300 * time.Millisecond, 1},
		"Retry-After passes the deadline": {httpkit.Retry{MaxAttempts: 3}, 503, "2", 300 * time.Millisecond, 1},
		"next wait passes MaxElapsed":     {httpkit.Retry{MaxAttempts: 3, Base: 5 * time.Second, MaxElapsed: time.Second}, 503, "", 0, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t, func(i int, w http.ResponseWriter) {
				if tc.header != "" {
					w.Header().Set("Retry-After", tc.header)
				}
				w.WriteHeader(tc.status)
				w.Write([]byte("the last answer"))
			})
			ctx := t.Context()
			if tc.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctx)
				defer cancel()
			}
			start := time.Now()
			resp, n, err := do(ctx, &tc.retry, http.MethodGet, srv.URL, "")
			if err != nil {
				t.Fatal(err)
			}
			defer httpkit.Drain(resp)
			if n != tc.attempts || len(srv.attempts()) != tc.attempts || resp.StatusCode != tc.status {
				t.Errorf("attempts %d, server saw %d, status %d; want %d attempts and the last answer", n, len(srv.attempts()), resp.StatusCode, tc.attempts)
			}
			if s := httpkit.Snippet(resp, nil); s != "the last answer" {
				t.Errorf("last answer's body %q: it must be left unread", s)
			}
			if d := time.Since(start); d > 250*time.Millisecond {
				t.Errorf("took %v: a wait that cannot end in time must not start", d)
			}
		})
	}
}

// A write the server may have done is not sent again, unless it carries
// an idempotency key or the failure proves the server did none of it.
func TestRetryIdempotency(t *testing.T) {
	tests := map[string]struct {
		method, key string
		status      int
		attempts    int
	}{
		"POST 500 without key":  {http.MethodPost, "", 500, 1},
		"POST 502 without key":  {http.MethodPost, "", 502, 1},
		"PATCH 503 without key": {http.MethodPatch, "", 503, 1},
		"POST 500 with key":     {http.MethodPost, "op-1", 500, 3},
		"POST 429 without key":  {http.MethodPost, "", 429, 3},
		"POST 425 without key":  {http.MethodPost, "", 425, 3},
		"POST 408 without key":  {http.MethodPost, "", 408, 3},
		"PUT 500":               {http.MethodPut, "", 500, 3},
		"DELETE 503":            {http.MethodDelete, "", 503, 3},
		"GET 500":               {http.MethodGet, "", 500, 3},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := newServer(t, func(i int, w http.ResponseWriter) { w.WriteHeader(tc.status) })
			resp, n, err := do(t.Context(), &httpkit.Retry{MaxAttempts: 3, Base: time.Millisecond}, tc.method, srv.URL, tc.key)
			if err != nil {
				t.Fatal(err)
			}
			httpkit.Drain(resp)
			if n != tc.attempts || len(srv.attempts()) != tc.attempts {
				t.Errorf("attempts %d, server saw %d; want %d", n, len(srv.attempts()), tc.attempts)
			}
		})
	}
}

// A POST whose connection dropped after the server read it is not sent
// again; one whose connection was never made is.
func TestRetryNetworkFailures(t *testing.T) {
	var got atomic.Int64
	drop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer drop.Close()
	p := &httpkit.Retry{MaxAttempts: 3, Base: time.Millisecond}

	_, n, err := do(t.Context(), p, http.MethodPost, drop.URL, "")
	if err == nil || n != 1 || got.Load() != 1 {
		t.Errorf("POST, connection dropped: attempts %d, server got %d, err %v; want 1, 1 and an error", n, got.Load(), err)
	}
	_, n, err = do(t.Context(), p, http.MethodPost, drop.URL, "op-2")
	if err == nil || n != 3 || got.Load() != 4 {
		t.Errorf("POST with key, connection dropped: attempts %d, server got %d in all, err %v; want 3, 4", n, got.Load(), err)
	}
	_, n, err = do(t.Context(), p, http.MethodPost, "http://"+closedAddr(t), "")
	if err == nil || n != 3 {
		t.Errorf("POST, connection refused: attempts %d, err %v; want 3: it never reached a server", n, err)
	}

	// A name that does not exist is not asked again.
	noHost := &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.DNSError{Err: "no such host", Name: "nowhere.example", IsNotFound: true}
	}}}
	_, n, err = p.Do(t.Context(), noHost, func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, "http://nowhere.example/", nil)
	})
	if err == nil || n != 1 {
		t.Errorf("no such host: attempts %d, err %v; want 1", n, err)
	}

	blocked := &httpkit.Retry{MaxAttempts: 3, Base: time.Millisecond}
	_, n, err = blocked.Do(t.Context(), netguard.NewClient(netguard.Options{}), func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, drop.URL, nil)
	})
	if !errors.Is(err, netguard.ErrBlocked) || n != 1 {
		t.Errorf("refused address: attempts %d, err %v; want 1, blocked", n, err)
	}
}

// Whatever the attempts allow, retries stop at MaxElapsed.
func TestRetryTotalTimeBounded(t *testing.T) {
	srv := newServer(t, func(i int, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) })
	p := &httpkit.Retry{MaxAttempts: 1000, Base: 20 * time.Millisecond, MaxWait: 40 * time.Millisecond, MaxElapsed: 300 * time.Millisecond}
	start := time.Now()
	resp, n, err := do(t.Context(), p, http.MethodGet, srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	httpkit.Drain(resp)
	if d := time.Since(start); d > 300*time.Millisecond+200*time.Millisecond {
		t.Errorf("retried for %v; MaxElapsed is 300ms", d)
	}
	if n < 3 || n > 30 {
		t.Errorf("%d attempts in 300ms with waits of 20 to 40ms", n)
	}
}

func TestRetryCancelledWhileWaiting(t *testing.T) {
	srv := newServer(t, func(i int, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) })
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, n, err := do(ctx, &httpkit.Retry{MaxAttempts: 3, Base: 10 * time.Second}, http.MethodGet, srv.URL, "")
	if !errors.Is(err, context.Canceled) || n != 1 || time.Since(start) > time.Second {
		t.Errorf("err %v after %d attempts and %v; want cancelled at once", err, n, time.Since(start))
	}
}

// Each backoff lies in the upper half of its doubled base, capped at
// MaxWait, and varies.
func TestBackoffJitterBounded(t *testing.T) {
	p := &httpkit.Retry{Base: 100 * time.Millisecond, MaxWait: 5 * time.Second}
	for attempt := 1; attempt <= 70; attempt++ {
		ceil := 5 * time.Second
		if attempt <= 6 {
			ceil = 100 * time.Millisecond << (attempt - 1)
		}
		seen := map[time.Duration]bool{}
		for range 200 {
			d := p.Backoff(attempt)
			if d < ceil/2 || d > ceil {
				t.Fatalf("attempt %d: backoff %v outside [%v, %v]", attempt, d, ceil/2, ceil)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Errorf("attempt %d: %d distinct backoffs in 200: no jitter", attempt, len(seen))
		}
	}
	if d := (&httpkit.Retry{}).Backoff(1); d < httpkit.DefaultBase/2 || d > httpkit.DefaultBase {
		t.Errorf("default first backoff %v", d)
	}
}

// With a Limiter every attempt, retries included, waits for its turn, and
// a turn past the deadline ends the call before anything is sent.
func TestRetryLimited(t *testing.T) {
	srv := newServer(t, func(i int, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) })
	lim := httpkit.NewLimiter("svc", httpkit.RateLimit{PerSecond: 10})
	p := &httpkit.Retry{MaxAttempts: 3, Base: time.Millisecond, Limiter: lim}
	resp, n, err := do(t.Context(), p, http.MethodGet, srv.URL, "")
	if err != nil || n != 3 {
		t.Fatalf("attempts %d, err %v", n, err)
	}
	httpkit.Drain(resp)
	at := srv.attempts()
	for i := 1; i < len(at); i++ {
		if gap := at[i].Sub(at[i-1]); gap < 80*time.Millisecond {
			t.Errorf("attempt %d came %v after the one before; the rate allows one per 100ms", i+1, gap)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, n, err = do(ctx, p, http.MethodGet, srv.URL, "")
	e := httpkit.TransportError(ctx, err, "other")
	if n != 0 || e.Code != legate.CodeRateLimited || e.RetryAfter <= 0 || !strings.HasPrefix(e.Message, "svc: rate_limit") {
		t.Errorf("attempts %d, error %v; want none sent and the limiter's RATE_LIMITED as it is", n, e)
	}
	if len(srv.attempts()) != 3 {
		t.Errorf("server saw %d requests; want the first call's 3 only", len(srv.attempts()))
	}
}
