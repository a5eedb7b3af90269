package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/opkey"
	"github.com/legate-mcp/legate/paramheader"
	"github.com/legate-mcp/legate/profiles"
	"github.com/legate-mcp/legate/proxy"
	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/server/broadcast"
	"github.com/legate-mcp/legate/server/didyoumean"
	"github.com/legate-mcp/legate/server/fastpath"
	"github.com/legate-mcp/legate/server/toolresult"
	"github.com/legate-mcp/legate/vault"
)

// newMCPServer builds the go-sdk server. tools/list and tools/call are
// answered by a receiving middleware straight from the catalog, not from
// tools registered on the SDK server: the catalog is swapped whole when a
// source changes, definitions pass through untouched (an upstream schema
// need not be an object schema the SDK would accept), and a call reaches
// the call path with no extra lookup or re-encoding.
func (g *Gateway) newMCPServer() *mcp.Server {
	version := g.opts.Version
	if version == "" {
		version = "dev"
	}
	px := proxy.New(g.upstreams, g.log, func() catalog.Naming { return g.Catalog().Naming() }, g.sealer)
	opts := &mcp.ServerOptions{
		Logger: g.log,
		Capabilities: &mcp.ServerCapabilities{
			Tools:   &mcp.ToolCapabilities{ListChanged: true},
			Logging: &mcp.LoggingCapabilities{},
		},
		InitializedHandler: g.fast.sessions.Track,
		Instructions:       profiles.Instructions(profiles.Sources(g.now().cfg, g.Instances(), &vault.Resolver{Vault: g.opts.Vault, Masks: g.masks}, g.upstreams, nil)),
	}
	if len(g.upstreams.IDs()) > 0 {
		// Upstreams may offer prompts, resources and completion: proxy them.
		opts.Capabilities.Prompts = &mcp.PromptCapabilities{}
		opts.Capabilities.Resources = &mcp.ResourceCapabilities{Subscribe: true}
		opts.Capabilities.Completions = &mcp.CompletionCapabilities{}
		opts.SubscribeHandler = px.Subscribe
		opts.UnsubscribeHandler = px.Unsubscribe
		opts.CompletionHandler = px.Complete
	}
	impl := &mcp.Implementation{Name: "legate", Title: "Legate", Version: version}
	serverInfo, _ := json.Marshal(impl)
	g.fast.paths = fastpath.New(g.fast, g.fast.sessions, g.metrics, serverInfo)
	s := mcp.NewServer(impl, opts)
	s.AddReceivingMiddleware(g.toolsMiddleware, px.Middleware)
	s.AddSendingMiddleware(rounds.CaptureElicitResult, profiles.ListChangedMiddleware, broadcast.New(g.log).Middleware)
	return s
}

func (g *Gateway) toolsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			r := req.(*mcp.ListToolsRequest)
			g.cold.wait(ctx)
			return g.discovery.List(principalOf(r.Extra), r.Session), nil
		case "tools/call":
			r := req.(*mcp.CallToolRequest)
			res, err := g.callTool(ctx, r)
			return toolresult.For(newProtocol(r.Session), res), err
		case "prompts/get":
			res, err := next(ctx, method, req)
			p, _ := res.(*mcp.GetPromptResult)
			p, err = toolresult.MaskRead(g.masks.Secrets(), p, err)
			return toolresult.For(newProtocol(req.(*mcp.GetPromptRequest).Session), p), err
		case "resources/read":
			res, err := next(ctx, method, req)
			p, _ := res.(*mcp.ReadResourceResult)
			p, err = toolresult.MaskRead(g.masks.Secrets(), p, err)
			if p != nil {
				// Which upstreams a caller may read through the gateway
				// depends on who it is, whatever the upstream said.
				p.CacheScope = catalog.CallerCache.CacheScope
			}
			return toolresult.For(newProtocol(req.(*mcp.ReadResourceRequest).Session), p), err
		case "initialize", "server/discover":
			res, err := next(ctx, method, req)
			addInstructions(res, g.now())
			return res, err
		}
		return next(ctx, method, req)
	}
}

func (g *Gateway) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	o := CallOptions{Session: req.Session, ProgressToken: req.Params.GetProgressToken(), IdempotencyKey: opkey.ClientKey(req.Params.Meta[legate.IdempotencyMetaKey])}
	if req.Session != nil {
		o.Caller.Session = req.Session.ID()
	}
	o.Principal = principalOf(req.Extra)
	if newProtocol(req.Session) {
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

// addInstructions appends to an initialize or discover result what the
// instances of l say of themselves (the host connector: its enabled skills).
func addInstructions(res mcp.Result, l *live) {
	var b strings.Builder
	for _, in := range l.instances {
		if i, ok := in.conn.(interface{ Instructions() string }); ok && i.Instructions() != "" {
			b.WriteString("\n\n" + i.Instructions())
		}
	}
	switch r := res.(type) {
	case *mcp.InitializeResult:
		r.Instructions += b.String()
	case *mcp.DiscoverResult:
		r.Instructions += b.String()
	}
}

// principalOf is the authenticated caller of a request, nil without auth.
func principalOf(extra *mcp.RequestExtra) *auth.Principal {
	if extra == nil {
		return nil
	}
	return auth.PrincipalFrom(extra.TokenInfo)
}

// ErrorResult turns a failed call into the result a client sees
// (toolresult.Error).
func ErrorResult(err error) *mcp.CallToolResult { return toolresult.Error(err) }
