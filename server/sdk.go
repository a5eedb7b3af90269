package server

import (
	"context"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/mcpapps"
	"github.com/legate-mcp/legate/opkey"
	"github.com/legate-mcp/legate/paramheader"
	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/server/didyoumean"
	"github.com/legate-mcp/legate/server/sdkserver"
)

// sdkGateway is what the go-sdk's server (package sdkserver) sees of the
// gateway: the catalog's lists, the call path, the masks.
type sdkGateway struct{ g *Gateway }

var _ sdkserver.Gateway = sdkGateway{}

// List is the tools/list p sees on ss, once a cold start's wait is over.
func (s sdkGateway) List(ctx context.Context, p *auth.Principal, ss *mcp.ServerSession) *mcp.ListToolsResult {
	s.g.cold.Before(ctx)
	return s.g.discovery.List(p, ss)
}

// Call takes a tools/call the SDK decoded along the call path.
func (s sdkGateway) Call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	g := s.g
	o := CallOptions{Session: req.Session, ProgressToken: req.Params.GetProgressToken(), IdempotencyKey: opkey.ClientKey(req.Params.Meta[legate.IdempotencyMetaKey])}
	if req.Session != nil {
		o.Caller.Session = req.Session.ID()
	}
	o.Principal = sdkserver.PrincipalOf(req.Extra)
	o.App = mcpapps.Negotiated(req.Session, req.Params.Meta)
	if sdkserver.NewProtocol(req.Session) {
		o.round, o.stateToken = rounds.NewRound(req.Params.Meta, req.Params.InputResponses), req.Params.RequestState
	}
	if req.Extra != nil && req.Extra.Header != nil {
		// The fast path checks the stateless calls it sees first, with
		// their HTTP status; this, any other.
		if e, ok := g.viewFor(o.Principal).Lookup(req.Params.Name); ok {
			if err := paramheader.Check(req.Extra.Header, e.Tool, req.Params.Arguments); err != nil {
				return nil, err
			}
		}
	}
	res, err := g.Call(ctx, req.Params.Name, req.Params.Arguments, o)
	if errors.Is(err, ErrUnknownTool) {
		return nil, didyoumean.UnknownTool(req.Params.Name, g.viewFor(o.Principal))
	}
	return res, err
}

// Secrets are every secret value the gateway holds (masks.go).
func (s sdkGateway) Secrets() *legate.Secrets { return s.g.masks.Secrets() }

// Instructions is what the instances in use say of themselves.
func (s sdkGateway) Instructions() string {
	var b strings.Builder
	for _, in := range s.g.now().instances {
		if i, ok := in.Conn.(interface{ Instructions() string }); ok && i.Instructions() != "" {
			b.WriteString("\n\n" + i.Instructions())
		}
	}
	return b.String()
}
