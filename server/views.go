package server

import (
	"context"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/legate-mcp/legate/audit"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/profiles"
	"github.com/legate-mcp/legate/vault"
)

// A principal sees a view of the catalog (profiles.View): the tools of its
// tenant and the shared ones, narrowed by its profile. A tool outside the view is, for that caller, unknown: not
// listed, and a call to it is an unknown-tool error. Without
// authentication there is no principal and the whole catalog is the view.

// DefaultViewCacheSize is how many views are kept built when the config
// sets no view_cache_size.
const DefaultViewCacheSize = 1024

// views caches the view of each (tenant, profile) for one catalog, the
// least recently used dropped past size: tenants come from JWTs, so
// their number is the issuer's to choose, not the gateway's.
type views struct {
	mu      sync.Mutex
	size    int
	metrics *audit.Metrics
	base    *catalog.Catalog
	lru     *simplelru.LRU[[2]string, *catalog.Catalog]
}

func newViews(size int, m *audit.Metrics) views {
	if size <= 0 {
		size = DefaultViewCacheSize
	}
	return views{size: size, metrics: m}
}

// viewFor returns the catalog p sees.
func (g *Gateway) viewFor(p *auth.Principal) *catalog.Catalog {
	base := g.Catalog()
	if p = g.discovery.WithDefault(p); p == nil {
		return base
	}
	vs := &g.views
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.base != base {
		// A new catalog: every view is stale. A fresh cache, not a purge,
		// so that the stale views are not counted as evictions.
		vs.base = base
		vs.lru, _ = simplelru.NewLRU(vs.size, func([2]string, *catalog.Catalog) { vs.metrics.ViewCacheEvictions.Inc() })
	}
	key := [2]string{p.Tenant + g.connections.ViewKey(p.Name), p.Profile}
	if v, ok := vs.lru.Get(key); ok {
		vs.metrics.ViewCacheHits.Inc()
		return v
	}
	v, err := g.buildView(base, p)
	if err != nil {
		g.log.Error("building a catalog view; showing none of it", "tenant", p.Tenant, "profile", p.Profile, "error", err)
		v, _ = catalog.Build(base.Naming(), nil)
	}
	vs.lru.Add(key, v)
	return v
}

func (g *Gateway) buildView(base *catalog.Catalog, p *auth.Principal) (*catalog.Catalog, error) {
	prof, known := g.profile(p.Profile)
	if p.Profile != "" && !known {
		g.log.Warn("principal names an unknown profile; it sees no tools", "principal", p.Name, "profile", p.Profile)
		return catalog.Build(base.Naming(), nil)
	}
	srcs := profiles.Sources(g.now().cfg, g.Instances(), &vault.Resolver{Vault: g.opts.Vault, Masks: g.masks}, g.upstreams, g.connections)
	return profiles.View(context.Background(), base, prof, p.Tenant, p.Name, srcs)
}

func (g *Gateway) profile(name string) (config.Profile, bool) {
	for _, p := range g.now().cfg.Profiles {
		if p.Name == name {
			return p, true
		}
	}
	return config.Profile{}, name == ""
}
