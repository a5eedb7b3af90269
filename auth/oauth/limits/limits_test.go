package limits_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/legate-mcp/legate/auth/oauth/limits"
)

// TestLimiterPerSource: a source past its burst waits, and takes no turn
// while refused; another source does not wait on its account.
func TestLimiterPerSource(t *testing.T) {
	l := limits.New(limits.Register)
	now := time.Now()
	for i := range 10 {
		if wait := l.Allow("192.0.2.1", now); wait != 0 {
			t.Fatalf("registration %d of the burst waits %v", i+1, wait)
		}
	}
	wait := l.Allow("192.0.2.1", now)
	if wait <= 0 {
		t.Fatal("the burst's excess does not wait")
	}
	if again := l.Allow("192.0.2.1", now); again != wait {
		t.Fatalf("a refused turn was taken: the wait went from %v to %v", wait, again)
	}
	if w := l.Allow("192.0.2.1", now.Add(wait)); w != 0 {
		t.Fatalf("after its wait: %v more", w)
	}
	if w := l.Allow("192.0.2.2", now); w != 0 {
		t.Fatalf("another source waits %v", w)
	}
}

// TestLimiterGlobal: the bucket for all refuses past its burst whatever
// the sources.
func TestLimiterGlobal(t *testing.T) {
	l := limits.New(limits.Register)
	now := time.Now()
	refused := 0
	for i := range 100 {
		if l.Allow("198.51.100."+string(rune('0'+i%10))+string(rune('0'+i/10)), now) > 0 {
			refused++
		}
	}
	if refused != 40 {
		t.Fatalf("100 registrations from 100 sources at once: %d refused, want 40 past the global burst", refused)
	}
}

// TestSource: the peer's IPv4 address; an IPv6 address by its /64;
// X-Forwarded-For is not read.
func TestSource(t *testing.T) {
	for addr, want := range map[string]string{
		"192.0.2.7:1234":             "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:443": "2001:db8:1:2::/64",
		"not an address":             "not an address",
		"[2001:db8:1:3::1]:1":        "2001:db8:1:3::/64",
		"[::ffff:192.0.2.8]:80":      "192.0.2.8",
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = addr
		r.Header.Set("X-Forwarded-For", "203.0.113.9")
		if got := limits.Source(r); got != want {
			t.Errorf("Source(%s) = %s, want %s", addr, got, want)
		}
	}
}

// TestRetryAfter: whole seconds, rounded up.
func TestRetryAfter(t *testing.T) {
	w := httptest.NewRecorder()
	if secs := limits.RetryAfter(w, 1500*time.Millisecond); secs != 2 || w.Header().Get("Retry-After") != "2" {
		t.Fatalf("1.5s: %d, header %q", secs, w.Header().Get("Retry-After"))
	}
}

// TestLoginGuard: three failures are made without waiting, the next
// check waits a second and each further failure doubles the wait, up to
// a minute; the wait is per name and source, forgotten on success or
// after the failure window; nobody is locked out.
func TestLoginGuard(t *testing.T) {
	g := limits.NewLoginGuard()
	now := time.Now()
	for i := range 3 {
		if w := g.Wait("ann", "192.0.2.1", now); w != 0 {
			t.Fatalf("after %d failures: wait %v", i, w)
		}
		g.Failed("ann", "192.0.2.1", now)
	}
	if w := g.Wait("ann", "192.0.2.1", now); w != time.Second {
		t.Fatalf("after 3 failures: wait %v, want 1s", w)
	}
	g.Failed("ann", "192.0.2.1", now)
	if w := g.Wait("ann", "192.0.2.1", now); w != 2*time.Second {
		t.Fatalf("after 4 failures: wait %v, want 2s", w)
	}
	if w := g.Wait("ann", "192.0.2.2", now); w != 0 {
		t.Fatalf("another source waits %v", w)
	}
	if w := g.Wait("bob", "192.0.2.1", now); w != 0 {
		t.Fatalf("another name waits %v", w)
	}
	for range 30 {
		g.Failed("ann", "192.0.2.1", now)
	}
	if w := g.Wait("ann", "192.0.2.1", now); w != time.Minute {
		t.Fatalf("after many failures: wait %v, want the 1m ceiling", w)
	}
	if w := g.Wait("ann", "192.0.2.1", now.Add(15*time.Minute)); w != 0 {
		t.Fatalf("after the failure window: wait %v", w)
	}
	g.Succeeded("ann", "192.0.2.1")
	if w := g.Wait("ann", "192.0.2.1", now); w != 0 {
		t.Fatalf("after a success: wait %v", w)
	}
}

// TestLoginGuardBoundsChecks: at most two password checks run at once.
func TestLoginGuardBoundsChecks(t *testing.T) {
	g := limits.NewLoginGuard()
	var running, most atomic.Int32
	done := make(chan bool)
	for range 8 {
		go func() {
			done <- g.Check(func() bool {
				n := running.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(10 * time.Millisecond)
				running.Add(-1)
				return true
			})
		}()
	}
	for range 8 {
		if !<-done {
			t.Fatal("Check did not return the check's result")
		}
	}
	if m := most.Load(); m > 2 {
		t.Fatalf("%d checks ran at once, want at most 2", m)
	}
}

// TestCheckParams: each parameter is bounded and given at most once, and
// all of them together.
func TestCheckParams(t *testing.T) {
	if msg := limits.CheckParams(url.Values{"client_id": {"lgc_x"}, "state": {"s"}}); msg != "" {
		t.Fatalf("a small request refused: %s", msg)
	}
	for name, tc := range map[string]struct {
		f    url.Values
		want string
	}{
		"long state":    {url.Values{"state": {strings.Repeat("a", 1025)}}, "state is too long: at most 1024"},
		"long redirect": {url.Values{"redirect_uri": {strings.Repeat("a", 2001)}}, "redirect_uri is too long: at most 2000"},
		"twice":         {url.Values{"client_id": {"a", "b"}}, "client_id is given more than once"},
		"too large":     {url.Values{"x_other": {strings.Repeat("a", 8<<10)}}, "at most 8192 bytes"},
	} {
		if msg := limits.CheckParams(tc.f); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %q, want it to say %q", name, msg, tc.want)
		}
	}
}
