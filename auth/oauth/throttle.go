package oauth

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"
)

// What an unauthenticated caller may ask of the authorization server:
// each endpoint that writes to the store or checks a password has a
// token bucket per source address and one for everyone. A refused
// request is answered 429 with Retry-After, before any work.
var (
	registerLimits  = limits{perSource: rate.Every(6 * time.Minute), sourceBurst: 10, global: 1, globalBurst: 60}
	authorizeLimits = limits{perSource: rate.Every(2 * time.Second), sourceBurst: 30, global: 20, globalBurst: 300}
	loginLimits     = limits{perSource: rate.Every(6 * time.Second), sourceBurst: 10, global: 10, globalBurst: 100}
)

// Bounds of password guessing.
const (
	// freeFailures failed logins of one name from one source cost
	// nothing; each further one doubles the wait before the next is
	// checked, from a second up to maxLoginDelay. The account is never
	// locked: its owner, from another address or after the wait, logs in.
	freeFailures  = 3
	maxLoginDelay = time.Minute
	// failureWindow is how long failures are remembered after the last.
	failureWindow = 15 * time.Minute
	// maxChecks bounds the argon2id computations running at once.
	maxChecks = 2
	// maxTracked bounds the sources and (name, source) pairs remembered;
	// past it the least recently seen are forgotten.
	maxTracked = 10000
)

// limits are the rates of one endpoint.
type limits struct {
	perSource   rate.Limit
	sourceBurst int
	global      rate.Limit
	globalBurst int
}

// limiter applies limits: a bucket per source, kept in a bounded cache,
// and one for all.
type limiter struct {
	l       limits
	global  *rate.Limiter
	sources *lru.Cache[string, *rate.Limiter]
}

func newLimiter(l limits) *limiter {
	sources, _ := lru.New[string, *rate.Limiter](maxTracked)
	return &limiter{l: l, global: rate.NewLimiter(l.global, l.globalBurst), sources: sources}
}

// allow takes a turn for source at now from its bucket and the global
// one; when either has none, it takes none and returns how long to wait.
func (l *limiter) allow(source string, now time.Time) time.Duration {
	b, ok := l.sources.Get(source)
	if !ok {
		b = rate.NewLimiter(l.l.perSource, l.l.sourceBurst)
		if prev, found, _ := l.sources.PeekOrAdd(source, b); found {
			b = prev
		}
	}
	rs := b.ReserveN(now, 1)
	rg := l.global.ReserveN(now, 1)
	if d := max(rs.DelayFrom(now), rg.DelayFrom(now)); d > 0 {
		rs.CancelAt(now)
		rg.CancelAt(now)
		return d
	}
	return 0
}

// sourceOf is the address r comes from, as the limits count it: the
// peer's IP (Legate has no trusted-proxy setting, so X-Forwarded-For is
// not read), an IPv6 address by its /64, which one host usually holds.
func sourceOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if ip.To4() == nil {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return ip.String()
}

// tooMany writes 429 with Retry-After: an OAuth error for the endpoints
// clients call, the error page for the browser's.
func tooMany(w http.ResponseWriter, wait time.Duration, page bool) {
	secs := int(math.Ceil(wait.Seconds()))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	msg := fmt.Sprintf("Too many requests from your address: try again in %d seconds.", secs)
	if page {
		errorPage(w, http.StatusTooManyRequests, msg)
		return
	}
	oauthError(w, http.StatusTooManyRequests, "too_many_requests", fmt.Sprintf("too many requests from this address: retry after %d seconds", secs))
}

// loginGuard slows password guessing down without locking anyone out:
// failed logins of a name from a source make the next check of that name
// from that source wait longer and longer; the checks running at once
// are bounded, so guessing cannot exhaust memory or CPU.
type loginGuard struct {
	sem chan struct{}

	mu       sync.Mutex
	failures *lru.Cache[string, failures]
}

type failures struct {
	n    int
	last time.Time
}

func newLoginGuard() *loginGuard {
	f, _ := lru.New[string, failures](maxTracked)
	return &loginGuard{sem: make(chan struct{}, maxChecks), failures: f}
}

func guardKey(name, source string) string { return source + "\x00" + name }

// wait is how long name's logins from source wait at now before a
// password is checked again; 0 when it may be.
func (g *loginGuard) wait(name, source string, now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	f, ok := g.failures.Get(guardKey(name, source))
	if !ok || f.n < freeFailures || now.Sub(f.last) >= failureWindow {
		return 0
	}
	delay := min(time.Second<<min(f.n-freeFailures, 16), maxLoginDelay)
	return max(f.last.Add(delay).Sub(now), 0)
}

// failed counts a failed login of name from source.
func (g *loginGuard) failed(name, source string, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := guardKey(name, source)
	f, _ := g.failures.Get(k)
	if now.Sub(f.last) >= failureWindow {
		f = failures{}
	}
	f.n++
	f.last = now
	g.failures.Add(k, f)
}

// succeeded forgets name's failures from source.
func (g *loginGuard) succeeded(name, source string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.failures.Remove(guardKey(name, source))
}

// check runs CheckPassword within the bound of concurrent checks.
func (g *loginGuard) check(hash, password string) bool {
	g.sem <- struct{}{}
	defer func() { <-g.sem }()
	return CheckPassword(hash, password)
}
