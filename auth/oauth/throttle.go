package oauth

import (
	"sync"
	"time"
)

// Bounds of password guessing.
const (
	// maxFailures failed logins for one user name within failureWindow
	// close that name's logins until the window ends.
	maxFailures   = 5
	failureWindow = 15 * time.Minute
	// maxChecks bounds the argon2id computations running at once.
	maxChecks = 2
	// maxTracked bounds the names remembered; past it, the oldest
	// windows are forgotten.
	maxTracked = 10000
)

// loginGuard throttles password checks: a name (known or not: the
// answer is the same) that failed too often is refused without a check,
// and the checks running at once are bounded, so guessing is slow and
// cannot exhaust memory.
type loginGuard struct {
	sem chan struct{}

	mu       sync.Mutex
	failures map[string]failureWindowCount
}

type failureWindowCount struct {
	n     int
	start time.Time
}

func newLoginGuard() *loginGuard {
	return &loginGuard{sem: make(chan struct{}, maxChecks), failures: map[string]failureWindowCount{}}
}

// closed reports whether name's logins are closed at now.
func (g *loginGuard) closed(name string, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	f, ok := g.failures[name]
	return ok && f.n >= maxFailures && now.Sub(f.start) < failureWindow
}

// failed counts a failed login for name.
func (g *loginGuard) failed(name string, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := g.failures[name]
	if now.Sub(f.start) >= failureWindow {
		f = failureWindowCount{start: now}
	}
	f.n++
	g.failures[name] = f
	if len(g.failures) > maxTracked {
		for k, v := range g.failures {
			if now.Sub(v.start) >= failureWindow || len(g.failures) > maxTracked {
				delete(g.failures, k)
			}
		}
	}
}

// succeeded forgets name's failures.
func (g *loginGuard) succeeded(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.failures, name)
}

// check runs CheckPassword within the bound of concurrent checks.
func (g *loginGuard) check(hash, password string) bool {
	g.sem <- struct{}{}
	defer func() { <-g.sem }()
	return CheckPassword(hash, password)
}
