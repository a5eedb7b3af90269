package server

import (
	"context"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/server/jsonlines"
)

// ViewFor is the catalog p sees, for tests of the view cache.
func ViewFor(g *Gateway, p *auth.Principal) *catalog.Catalog { return g.viewFor(p) }

// ViewCacheLen is how many views are kept built.
func ViewCacheLen(g *Gateway) int { return g.views.Len() }

// SDKClient connects a client to g's MCP server in memory: its requests
// all take the SDK's path, none the HTTP fast path.
func SDKClient(ctx context.Context, g *Gateway) (*mcp.ClientSession, error) {
	ct, st := mcp.NewInMemoryTransports()
	if _, err := g.mcp.Connect(ctx, st, nil); err != nil {
		return nil, err
	}
	return mcp.NewClient(&mcp.Implementation{Name: "sdk-path", Version: "1"}, nil).Connect(ctx, ct, nil)
}

// ServeLines serves one client over r and w as ServeStdio does; with fast
// false, every line takes the SDK's path.
func ServeLines(ctx context.Context, g *Gateway, r io.Reader, w io.Writer, fast bool) error {
	t := &jsonlines.Transport{R: r, W: w, Log: g.log, Max: jsonlines.MaxLine}
	if fast {
		return jsonlines.Run(ctx, g.mcp, t, g.fast.paths.Line) // as ServeStdio serves
	}
	return g.mcp.Run(ctx, t)
}
