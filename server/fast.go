package server

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/connections"
	"github.com/legate-mcp/legate/profiles"
	"github.com/legate-mcp/legate/server/fastpath"
	"github.com/legate-mcp/legate/server/instances"
	"github.com/legate-mcp/legate/tasks"
	"github.com/legate-mcp/legate/upstream"
)

// fastPath is the gateway's side of the HTTP fast paths (package
// fastpath): fastpath.Gateway, the one way they reach the catalog and the
// call path, and the sessions of this process they may answer on.
type fastPath struct {
	gw       *Gateway
	paths    *fastpath.Paths // set once the MCP server is built (New)
	sessions *fastpath.Sessions
}

var _ fastpath.Gateway = (*fastPath)(nil)

// List is the tools/list p sees on ss, encoded, once a cold start's wait is over.
func (f *fastPath) List(ctx context.Context, p *auth.Principal, ss *mcp.ServerSession) []byte {
	f.gw.cold.Before(ctx)
	return f.gw.discovery.ListJSON(p, ss)
}

// Lookup is the entry of the tool p calls name.
func (f *fastPath) Lookup(p *auth.Principal, name string) (*catalog.Entry, bool) {
	return f.gw.viewFor(p).Lookup(name)
}

// Call takes c along the call path, relayed (Request.relay).
func (f *fastPath) Call(ctx context.Context, c fastpath.Call) (json.RawMessage, *mcp.CallToolResult, error) {
	o := CallOptions{Principal: c.Principal, Session: c.Session, ProgressToken: c.ProgressToken, IdempotencyKey: c.IdempotencyKey, round: c.Round}
	if c.Session != nil {
		o.Caller.Session = c.Session.ID()
	}
	r := f.gw.newRequest(c.Entry, c.Args, o)
	if r.heldOnly = !f.fastable(r); r.heldOnly && !tasks.Wanted(c.Round) {
		return nil, nil, fastpath.ErrSDK // a call it cannot run, nor answer as a task if held
	}
	r.relay = c.Relay
	res, err := f.gw.run(ctx, r)
	switch {
	case err == errHandBack:
		return nil, nil, fastpath.ErrSDK
	case err != nil || res == nil:
		return nil, nil, err
	}
	return res.Raw, res.MCP, nil
}

// fastable reports whether the HTTP fast path can answer a call r
// (Request.relay): a native tool, whose result it encodes as the SDK
// would, or an upstream's tool that Relay relays as bytes. Calls of
// per_client, stdio and SSE upstreams take the SDK's path, which routes
// their requests to the client.
func (f *fastPath) fastable(r *Request) bool {
	g, execute := f.gw, executeStep{g: f.gw}
	switch t := r.Entry.Target.(type) {
	case *instances.Tool: // a search may change the session's list, which the SDK notifies; asking to connect takes the SDK's session
		asks := t.Inst != nil && execute.autoAuth(r) && connections.MayAsk(t.Inst.Def.PerUserCredential() != "", connections.Asker{Session: r.Session})
		return r.Entry.Canonical != profiles.SearchTool && !asks
	case *upstream.Tool: // as for an instance; any other upstream's calls pay one field's read
		return g.upstreams.Relayable(t) && !(connections.MayAsk(t.PerPrincipal, connections.Asker{Session: r.Session}) && execute.autoAuth(r))
	}
	return false
}
