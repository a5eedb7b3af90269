package server

import (
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
)

// ViewFor is the catalog p sees, for tests of the view cache.
func ViewFor(g *Gateway, p *auth.Principal) *catalog.Catalog { return g.viewFor(p) }

// ViewCacheLen is how many views are kept built.
func ViewCacheLen(g *Gateway) int {
	g.views.mu.Lock()
	defer g.views.mu.Unlock()
	if g.views.lru == nil {
		return 0
	}
	return g.views.lru.Len()
}
