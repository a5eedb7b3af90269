package auth

import "time"

// SetJWKSRetry sets the least time between fetches of the issuer's keys
// prompted by an unknown key id (30s otherwise), for tests of rotation.
func SetJWKSRetry(a *Authenticator, d time.Duration) {
	a.oauth.keys.mu.Lock()
	defer a.oauth.keys.mu.Unlock()
	a.oauth.keys.retry = d
}

// Fetching reports whether a fetch of the issuer's keys is running.
func Fetching(a *Authenticator) bool {
	a.oauth.keys.mu.Lock()
	defer a.oauth.keys.mu.Unlock()
	return a.oauth.keys.inflight != nil
}
