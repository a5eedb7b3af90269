package profiles

import (
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
)

// DefaultViewCacheSize is how many views are kept built when the config
// sets no view_cache_size.
const DefaultViewCacheSize = 1024

// Views caches the view of each (tenant, profile) for one catalog, the
// least recently used dropped past size: tenants come from JWTs, so
// their number is the issuer's to choose, not the gateway's.
type Views struct {
	mu    sync.Mutex
	size  int
	build func(base *catalog.Catalog, p *auth.Principal) *catalog.Catalog
	hit   func() // a view found built
	evict func() // a view dropped past size
	base  *catalog.Catalog
	lru   *simplelru.LRU[[2]string, *catalog.Catalog]
}

// NewViews returns a cache of size views (0: DefaultViewCacheSize), each
// built by build.
func NewViews(size int, build func(base *catalog.Catalog, p *auth.Principal) *catalog.Catalog, hit, evict func()) *Views {
	if size <= 0 {
		size = DefaultViewCacheSize
	}
	return &Views{size: size, build: build, hit: hit, evict: evict}
}

// Get returns p's view of base, key naming it (its tenant and profile).
func (vs *Views) Get(base *catalog.Catalog, key [2]string, p *auth.Principal) *catalog.Catalog {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.base != base {
		// A new catalog: every view is stale. A fresh cache, not a purge,
		// so that the stale views are not counted as evictions.
		vs.base = base
		vs.lru, _ = simplelru.NewLRU(vs.size, func([2]string, *catalog.Catalog) { vs.evict() })
	}
	if v, ok := vs.lru.Get(key); ok {
		vs.hit()
		return v
	}
	v := vs.build(base, p)
	vs.lru.Add(key, v)
	return v
}

// Len is how many views are kept built.
func (vs *Views) Len() int {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.lru == nil {
		return 0
	}
	return vs.lru.Len()
}
