package auth

import (
	"fmt"
	"net/http"
)

// NotPinned is the refusal of a change to a hardened deployment by a
// principal not in auth.pins: it names the principal and how to pin it.
func NotPinned(principal string) error {
	return fmt.Errorf("hardened deployment: principal %q is not pinned, and only pinned principals may change connectors, upstreams, vault secrets, tokens and users; to allow it, add it to auth.pins in the config (auth: {pins: [%q]})", principal, principal)
}

// RequirePinned lets through to next the requests that change nothing
// (GET, HEAD, OPTIONS), and the others only from a pinned principal when
// the deployment is hardened (auth.hardened): 403 naming the principal
// refused and how to pin it. It goes inside Middleware, around the routes
// that change the deployment.
func (a *Authenticator) RequirePinned(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		}
		p := PrincipalFromContext(r.Context())
		name := ""
		if p != nil {
			name = p.Name
		}
		if !a.cfg.Pinned(name) {
			http.Error(w, NotPinned(name).Error(), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
