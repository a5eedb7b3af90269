package server

import (
	"context"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/profiles"
	"github.com/legate-mcp/legate/vault"
)

// A principal sees a view of the catalog (profiles.View): the tools of its
// tenant and the shared ones, narrowed by its profile. A tool outside the
// view is, for that caller, unknown: not listed, and a call to it is an
// unknown-tool error. Without authentication there is no principal and the
// whole catalog is the view. A request to /mcp/{profile} narrows it
// (profiles.Discovery.Narrow). Views are cached (profiles.Views).

// sources are the gateway's connector instances and upstreams.
func (g *Gateway) sources() []profiles.Source {
	return profiles.Sources(g.now().cfg, g.Instances(), &vault.Resolver{Vault: g.opts.Vault, Masks: g.masks}, g.upstreams, g.connections)
}

// viewFor returns the catalog p sees.
func (g *Gateway) viewFor(p *auth.Principal) *catalog.Catalog {
	base := g.Catalog()
	if p = g.discovery.WithDefault(p); p == nil {
		return base
	}
	return g.views.Get(base, [2]string{p.Tenant + g.connections.ViewKey(p.Name), p.Profile + "\x00" + p.Narrow}, p)
}

// buildView builds p's view of base; one that does not build (its profile
// unknown, say) shows none of it.
func (g *Gateway) buildView(base *catalog.Catalog, p *auth.Principal) *catalog.Catalog {
	v, err := profiles.ViewOf(context.Background(), base, g.now().cfg.ProfileNamed, p, g.sources())
	if err != nil {
		g.log.Warn("building a catalog view; showing none of it", "tenant", p.Tenant, "profile", p.Profile, "error", err)
		v, _ = catalog.Build(base.Naming(), nil)
	}
	return v
}
