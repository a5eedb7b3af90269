package agent

import (
	"context"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
)

// connect opens an MCP client session on srv over an in-memory transport,
// every request of which the server sees as made by p (nil: the
// unauthenticated local principal), as if p's token had authenticated it.
// progress receives the progress notifications of its calls.
func connect(ctx context.Context, srv *mcp.Server, p *auth.Principal, version string, progress func(*mcp.ProgressNotificationParams)) (*mcp.ClientSession, error) {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, &asPrincipal{Transport: st, p: p}, nil)
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "legate-agent", Version: version}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { progress(req.Params) },
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		ss.Close()
		return nil, err
	}
	return cs, nil
}

// asPrincipal is a server-side transport whose requests carry p's token
// information, where Streamable HTTP would put the bearer token's.
type asPrincipal struct {
	mcp.Transport
	p *auth.Principal
}

func (t *asPrincipal) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil || t.p == nil {
		return c, err
	}
	ti := &sdkauth.TokenInfo{Expiration: time.Now().Add(100 * 365 * 24 * time.Hour), Extra: map[string]any{auth.PrincipalKey: t.p}}
	return &principalConn{Connection: c, ti: ti}, nil
}

type principalConn struct {
	mcp.Connection
	ti *sdkauth.TokenInfo
}

func (c *principalConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if req, ok := m.(*jsonrpc.Request); ok {
		req.Extra = &mcp.RequestExtra{TokenInfo: c.ti}
	}
	return m, err
}
