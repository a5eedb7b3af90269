package mcpauth

import (
	"context"
	"fmt"
	"net/http"

	"github.com/legate-mcp/legate/connections"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/vault"
)

// ForUpstreams returns the Apps of the upstreams with auth: oauth that
// ups (read at each use: the manager may not exist yet) has; a configured
// client's secret is read through res, in the upstream's tenant.
func ForUpstreams(ups func() *upstream.Manager, res *vault.Resolver) *Apps {
	return &Apps{Upstream: func(id string) (Upstream, bool) {
		m := ups()
		if m == nil {
			return Upstream{}, false
		}
		u, ok := m.Upstream(id)
		if !ok || !u.Config().OAuthProtected() {
			return Upstream{}, false
		}
		c := u.Config()
		up := Upstream{ID: id, URL: c.URL, Tenant: c.Tenant}
		if c.OAuth != nil {
			up.ClientID, up.Scopes = c.OAuth.ClientID, c.OAuth.Scopes
			if c.OAuth.ClientSecret != nil {
				var err error
				if up.ClientSecret, err = res.Resolve(context.Background(), c.Tenant, *c.OAuth.ClientSecret); err != nil {
					up.Err = fmt.Errorf("its oauth.client_secret cannot be read: %w", err)
				}
			}
		}
		return up, true
	}}
}

// Any reports whether ups has an upstream with auth: oauth.
func Any(ups *upstream.Manager) bool {
	if ups == nil {
		return false
	}
	for _, id := range ups.IDs() {
		if u, ok := ups.Upstream(id); ok && u.Config().OAuthProtected() {
			return true
		}
	}
	return false
}

// List is the upstreams of ups with auth: oauth, which people connect.
func List(ups *upstream.Manager) []connections.OAuthUpstream {
	if ups == nil {
		return nil
	}
	var out []connections.OAuthUpstream
	for _, id := range ups.IDs() {
		if u, ok := ups.Upstream(id); ok && u.Config().OAuthProtected() {
			out = append(out, connections.OAuthUpstream{ID: id, Tenant: u.Config().Tenant})
		}
	}
	return out
}

// Wire lets people connect the OAuth-protected upstreams of ups through
// conns (their clients' secrets read from v), and returns
// upstream.Options.Authorize: a principal's session carries the
// principal's token from conns. A connection made lists the upstream's
// tools if they never were (Manager.ConnectedAs).
func Wire(conns *connections.Manager, ups func() *upstream.Manager, v *vault.Vault) func(id, tenant, principal string, base http.RoundTripper) http.RoundTripper {
	apps := ForUpstreams(ups, &vault.Resolver{Vault: v})
	conns.ConnectUpstreams(apps.App, func(id, tenant, principal string) {
		if m := ups(); m != nil {
			m.ConnectedAs(id, tenant, principal)
		}
	}, func() bool { return Any(ups()) }, func() []connections.OAuthUpstream { return List(ups()) })
	return Authorize(conns)
}

// Authorize is upstream.Options.Authorize: a principal's session carries
// the principal's token from tokens.
func Authorize(tokens Tokens) func(id, tenant, principal string, base http.RoundTripper) http.RoundTripper {
	return func(id, tenant, principal string, base http.RoundTripper) http.RoundTripper {
		return &Transport{Base: base, ID: id, Tokens: tokens, Caller: &Caller{Tenant: tenant, Principal: principal}}
	}
}
