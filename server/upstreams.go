package server

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/mcpauth"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/vault"
)

// newUpstreams builds the upstream manager from the cached tools; it does
// no I/O to upstreams.
func (g *Gateway) newUpstreams(ctx context.Context) error {
	defs, err := sources.UpstreamDefs(ctx, g.opts.Config, g.opts.Store)
	if err != nil {
		return err
	}
	pinSecrets(ctx, g, defs)
	g.upstreams, err = upstream.NewManager(ctx, defs, upstream.Options{
		Store:          g.opts.Store.Upstreams(),
		Pins:           g.opts.Store.Pins(),
		OnQuarantine:   func(q upstream.Quarantined) { g.quarantines.Quarantined(q.Event()) },
		Logger:         g.log,
		Version:        g.opts.Version,
		OnToolsChanged: g.toolsChanged,
		PollInterval:   500 * time.Millisecond, // a refresh or acceptance by the CLI or another replica reaches clients within it
		MaxResultBytes: g.opts.Config.MaxResultBytes,
		Resolve:        (&vault.Resolver{Vault: g.opts.Vault, Masks: g.masks}).Resolve,
		Authorize:      mcpauth.Wire(g.connections, func() *upstream.Manager { return g.upstreams }, g.opts.Vault),
		OnResourceUpdated: func(ctx context.Context, p *mcp.ResourceUpdatedNotificationParams) {
			g.mcp.ResourceUpdated(ctx, p)
		},
	})
	return err
}

// toolsChanged rebuilds the catalog after an upstream's tools changed. A
// catalog that does not build (a new name collides) is refused and the
// current one kept, with the collision logged.
func (g *Gateway) toolsChanged() {
	if g.mcp == nil {
		return // still in New, which builds the first catalog itself
	}
	cat, err := g.buildCatalog()
	if err != nil {
		g.log.Error("upstream tools changed but the catalog cannot be rebuilt; keeping the current one", "error", err)
		return
	}
	g.setCatalog(cat, false)
}

// setCatalog swaps in a new catalog and, when its tools differ from the
// old one's, tells clients: the SDK server's tool registry holds a single
// sentinel entry (tools/list and tools/call never reach the registry: the
// tools middleware answers them), and re-adding it makes the SDK send a
// debounced notifications/tools/list_changed to every client, each in the
// way its protocol version expects.
//
// With force, clients are told even when the catalog's tools are the same
// (what a profile shows changed).
func (g *Gateway) setCatalog(c *catalog.Catalog, force bool) {
	old := g.cat.Swap(c)
	go c.ListJSON() // encoded ahead of the first tools/list, off the caller's path
	// Its new tools are embedded for legate.search_tools, in the background.
	g.discovery.Dense.Warm(c)
	if !force && old != nil && old.Fingerprint() == c.Fingerprint() {
		return
	}
	g.mcp.AddTool(&mcp.Tool{Name: "legate__catalog", InputSchema: json.RawMessage(`{"type":"object"}`)}, unreachable)
}

// unreachable is the handler of the mirrored registry entries.
func unreachable(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, fmt.Errorf("internal error: tool registry entry called directly")
}
