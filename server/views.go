package server

import (
	"path"
	"sync"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/config"
)

// A principal sees a view of the catalog: the tools of its tenant and the
// shared ones, narrowed by its profile (include and exclude globs over
// canonical names, max_tools first by canonical name), under the profile's
// wire naming. A tool outside the view is, for that caller, unknown: not
// listed, and a call to it is an unknown-tool error. Without
// authentication there is no principal and the whole catalog is the view.

// views caches the view of each (tenant, profile) for one catalog.
type views struct {
	mu   sync.Mutex
	base *catalog.Catalog
	m    map[[2]string]*catalog.Catalog
}

// viewFor returns the catalog p sees.
func (g *Gateway) viewFor(p *auth.Principal) *catalog.Catalog {
	base := g.Catalog()
	if p == nil {
		return base
	}
	g.views.mu.Lock()
	defer g.views.mu.Unlock()
	if g.views.base != base {
		g.views.base, g.views.m = base, map[[2]string]*catalog.Catalog{}
	}
	key := [2]string{p.Tenant, p.Profile}
	if v, ok := g.views.m[key]; ok {
		return v
	}
	v, err := g.buildView(base, p)
	if err != nil {
		g.log.Error("building a catalog view; showing none of it", "tenant", p.Tenant, "profile", p.Profile, "error", err)
		v, _ = catalog.Build(base.Naming(), nil)
	}
	g.views.m[key] = v
	return v
}

func (g *Gateway) buildView(base *catalog.Catalog, p *auth.Principal) (*catalog.Catalog, error) {
	prof, known := g.profile(p.Profile)
	if p.Profile != "" && !known {
		g.log.Warn("principal names an unknown profile; it sees no tools", "principal", p.Name, "profile", p.Profile)
		return catalog.Build(base.Naming(), nil)
	}
	var entries []*catalog.Entry
	for _, e := range base.Entries() { // sorted by canonical name
		if e.Tenant != "" && e.Tenant != p.Tenant {
			continue
		}
		if len(prof.Include) > 0 && !anyGlob(prof.Include, e.Canonical) || anyGlob(prof.Exclude, e.Canonical) {
			continue
		}
		if prof.MaxTools > 0 && len(entries) == prof.MaxTools {
			break
		}
		c := *e
		t := *e.Tool
		t.Name = e.Canonical
		c.Tool = &t
		entries = append(entries, &c)
	}
	naming := base.Naming()
	if prof.ToolNames != "" {
		naming = catalog.Naming(prof.ToolNames)
	}
	return catalog.Build(naming, entries)
}

func (g *Gateway) profile(name string) (config.Profile, bool) {
	for _, p := range g.opts.Config.Profiles {
		if p.Name == name {
			return p, true
		}
	}
	return config.Profile{}, name == ""
}

func anyGlob(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}
