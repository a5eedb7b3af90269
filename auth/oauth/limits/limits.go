// Package limits bounds what callers nobody has authenticated may ask of
// Legate's authorization server: token buckets per source address and
// for all, failed logins slowed down per name and source rather than
// accounts locked, a bound on the password checks running at once, and
// the sizes of what a caller sends.
package limits

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"

	"github.com/legate-mcp/legate/auth/oauth/redirecturi"
)

// The sizes of what a caller sends besides an authorization request's
// parameters (CheckParams).
const (
	// MaxRegistrationBody bounds a client registration's body.
	MaxRegistrationBody = 16 << 10
	// MaxRedirectURIs bounds the redirect URIs of a client.
	MaxRedirectURIs = 10
	// MaxClientNameLen bounds a client's name.
	MaxClientNameLen = 200
	// MaxFormBytes bounds a login or consent form.
	MaxFormBytes = 16 << 10
	// MaxUserNameLen bounds the user name a login form may carry.
	MaxUserNameLen = 256
)

// The rates of the endpoints that write to the store or check a
// password, per source address and for everyone.
var (
	// Register is the rate of client registrations.
	Register = Rates{perSource: rate.Every(6 * time.Minute), sourceBurst: 10, global: 1, globalBurst: 60}
	// Authorize is the rate of authorization requests.
	Authorize = Rates{perSource: rate.Every(2 * time.Second), sourceBurst: 30, global: 20, globalBurst: 300}
	// Login is the rate of login forms posted.
	Login = Rates{perSource: rate.Every(6 * time.Second), sourceBurst: 10, global: 10, globalBurst: 100}
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

// Rates are the rates of one endpoint: Register, Authorize or Login.
type Rates struct {
	perSource   rate.Limit
	sourceBurst int
	global      rate.Limit
	globalBurst int
}

// Limiter applies Rates: a token bucket per source, kept in a bounded
// cache, and one for all.
type Limiter struct {
	r       Rates
	global  *rate.Limiter
	sources *lru.Cache[string, *rate.Limiter]
}

// New returns a Limiter of rates r, every bucket full.
func New(r Rates) *Limiter {
	sources, _ := lru.New[string, *rate.Limiter](maxTracked)
	return &Limiter{r: r, global: rate.NewLimiter(r.global, r.globalBurst), sources: sources}
}

// Allow takes a turn for source at now from its bucket and the global
// one; when either has none, it takes none and returns how long to wait.
func (l *Limiter) Allow(source string, now time.Time) time.Duration {
	b, ok := l.sources.Get(source)
	if !ok {
		b = rate.NewLimiter(l.r.perSource, l.r.sourceBurst)
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

// Source is the address r comes from, as the limits count it: the peer's
// IP (Legate has no trusted-proxy setting, so X-Forwarded-For is not
// read), an IPv6 address by its /64, which one host usually holds.
func Source(r *http.Request) string {
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

// RetryAfter sets w's Retry-After header to wait, in seconds rounded up,
// and returns those seconds.
func RetryAfter(w http.ResponseWriter, wait time.Duration) int {
	secs := int(math.Ceil(wait.Seconds()))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	return secs
}

// LoginGuard slows password guessing down without locking anyone out:
// failed logins of a name from a source make the next check of that name
// from that source wait longer and longer; the checks running at once
// are bounded, so guessing cannot exhaust memory or CPU.
type LoginGuard struct {
	sem chan struct{}

	mu       sync.Mutex
	failures *lru.Cache[string, failures]
}

type failures struct {
	n    int
	last time.Time
}

// NewLoginGuard returns a LoginGuard that remembers no failure yet.
func NewLoginGuard() *LoginGuard {
	f, _ := lru.New[string, failures](maxTracked)
	return &LoginGuard{sem: make(chan struct{}, maxChecks), failures: f}
}

func guardKey(name, source string) string { return source + "\x00" + name }

// Wait is how long name's logins from source wait at now before a
// password is checked again; 0 when it may be.
func (g *LoginGuard) Wait(name, source string, now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	f, ok := g.failures.Get(guardKey(name, source))
	if !ok || f.n < freeFailures || now.Sub(f.last) >= failureWindow {
		return 0
	}
	delay := min(time.Second<<min(f.n-freeFailures, 16), maxLoginDelay)
	return max(f.last.Add(delay).Sub(now), 0)
}

// Failed counts a failed login of name from source at now.
func (g *LoginGuard) Failed(name, source string, now time.Time) {
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

// Succeeded forgets name's failures from source.
func (g *LoginGuard) Succeeded(name, source string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.failures.Remove(guardKey(name, source))
}

// Check runs check, a password check, within the bound of checks running
// at once, and returns its result.
func (g *LoginGuard) Check(check func() bool) bool {
	g.sem <- struct{}{}
	defer func() { <-g.sem }()
	return check()
}

// paramLimits bound the parameters of an authorization request, which
// are stored with it until it expires; maxAuthorizeQuery bounds them all.
var paramLimits = []struct {
	name string
	max  int
}{
	{"client_id", 128}, {"redirect_uri", redirecturi.MaxLen}, {"state", 1024}, {"nonce", 256}, {"scope", 256},
	{"resource", redirecturi.MaxLen}, {"code_challenge", 128}, {"code_challenge_method", 16}, {"response_type", 32},
	{"response_mode", 32}, {"prompt", 64}, {"login_hint", 256}, {"ui_locales", 128},
}

const maxAuthorizeQuery = 8 << 10

// CheckParams names, for the person at the browser, the first parameter
// of the authorization request f longer than its limit or given more
// than once, or the request's being too large; it returns "" when f is
// within its limits.
func CheckParams(f url.Values) string {
	for _, p := range paramLimits {
		vs := f[p.name]
		if len(vs) > 1 {
			return fmt.Sprintf("The parameter %s is given more than once.", p.name)
		}
		if len(vs) == 1 && len(vs[0]) > p.max {
			return fmt.Sprintf("The parameter %s is too long: at most %d characters.", p.name, p.max)
		}
	}
	total := 0
	for k, vs := range f {
		for _, v := range vs {
			total += len(k) + len(v)
		}
	}
	if total > maxAuthorizeQuery {
		return fmt.Sprintf("The authorization request is too large: its parameters may hold at most %d bytes.", maxAuthorizeQuery)
	}
	return ""
}
