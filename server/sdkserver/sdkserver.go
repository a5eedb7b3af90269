// Package sdkserver builds the go-sdk MCP server behind Legate's front
// doors: Streamable HTTP (for what the fast paths leave to it), stdio, and
// the in-memory transport of an in-process client. tools/list and
// tools/call are answered by a receiving middleware straight from the
// catalog, not from tools registered on the SDK server: the catalog is
// swapped whole when a source changes, definitions pass through untouched
// (an upstream schema need not be an object schema the SDK would accept),
// and a call reaches the call path with no extra lookup or re-encoding.
// Prompts, resources and completion are proxied to the upstreams (package
// proxy).
package sdkserver

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/mcpapps"
	"github.com/legate-mcp/legate/profiles"
	"github.com/legate-mcp/legate/proxy"
	"github.com/legate-mcp/legate/resultcut"
	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/server/broadcast"
	"github.com/legate-mcp/legate/server/toolresult"
	"github.com/legate-mcp/legate/tasks"
)

// Gateway is what the SDK's server needs of the gateway.
type Gateway interface {
	// List is the tools/list result p sees on ss, once a cold start's wait
	// is over.
	List(ctx context.Context, p *auth.Principal, ss *mcp.ServerSession) *mcp.ListToolsResult
	// Call takes a tools/call along the call path.
	Call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)
	// Secrets are the values masked in what upstreams' prompts and
	// resources answer.
	Secrets() *legate.Secrets
	// Instructions is what the instances in use say of themselves (the
	// host connector: its enabled skills), added to the server's own.
	Instructions() string
}

// Options configure the server.
type Options struct {
	Version string // "" is "dev"
	Logger  *slog.Logger
	// Instructions are the server's instructions to clients.
	Instructions string
	// Proxy relays prompts, resources and completion to the upstreams,
	// which the server offers when there are any (Upstreams).
	Proxy     *proxy.Proxy
	Upstreams bool
	// Initialized is called as each session is initialized.
	Initialized func(context.Context, *mcp.InitializedRequest)
	// Results cuts results over their call's token budget and serves
	// their kept whole as legate://results/ resources; nil: no budgets.
	Results *resultcut.Keeper
	// Own, when set, serves the gateway's own resources (the events of
	// the instances receiving webhooks, package hooks), before the
	// upstreams' and beside them.
	Own Resources
}

// Resources are resources the gateway serves itself: its middleware
// answers their methods, and subscriptions to the URIs it owns are its.
type Resources interface {
	Middleware(next mcp.MethodHandler) mcp.MethodHandler
	Owns(uri string) bool
	Subscribe(ctx context.Context, r *mcp.SubscribeRequest) error
	Unsubscribe(ctx context.Context, r *mcp.UnsubscribeRequest) error
}

// New builds the server, and returns it with its Implementation's JSON
// (the serverInfo that results of stateless requests carry).
func New(gw Gateway, o Options) (*mcp.Server, json.RawMessage) {
	version := o.Version
	if version == "" {
		version = "dev"
	}
	opts := &mcp.ServerOptions{
		Logger: o.Logger,
		Capabilities: &mcp.ServerCapabilities{
			Tools:   &mcp.ToolCapabilities{ListChanged: true},
			Logging: &mcp.LoggingCapabilities{},
		},
		InitializedHandler: o.Initialized,
		Instructions:       o.Instructions,
	}
	// A call held for approval is a task for a stateless request that
	// declares the tasks extension (package tasks).
	opts.Capabilities.AddExtension(tasks.Extension, map[string]any{})
	px := o.Proxy
	if o.Upstreams {
		// Upstreams may offer prompts, resources and completion: proxy them.
		opts.Capabilities.Prompts = &mcp.PromptCapabilities{}
		opts.Capabilities.Resources = &mcp.ResourceCapabilities{Subscribe: true}
		opts.Capabilities.Completions = &mcp.CompletionCapabilities{}
		// And MCP Apps, relayed where an upstream and the caller's profile
		// allow them (allow_mcp_ui).
		opts.Capabilities.AddExtension(mcpapps.Extension, mcpapps.Settings())
		opts.SubscribeHandler = px.Subscribe
		opts.UnsubscribeHandler = px.Unsubscribe
		opts.CompletionHandler = px.Complete
	}
	own := mcp.Middleware(func(next mcp.MethodHandler) mcp.MethodHandler { return next })
	if o.Own != nil {
		own = o.Own.Middleware
		addOwn(opts, o.Own)
	}
	impl := &mcp.Implementation{Name: "legate", Title: "Legate", Version: version}
	serverInfo, _ := json.Marshal(impl)
	s := mcp.NewServer(impl, opts)
	s.AddReceivingMiddleware(tools(gw, o.Results), own, px.Middleware)
	s.AddSendingMiddleware(rounds.CaptureElicitResult, profiles.ListChangedMiddleware, broadcast.New(o.Logger).Middleware)
	return s, serverInfo
}

// addOwn offers resources with subscriptions, and sends the
// subscriptions to the URIs own owns to it, the others to the upstreams'.
func addOwn(opts *mcp.ServerOptions, own Resources) {
	if opts.Capabilities.Resources == nil {
		opts.Capabilities.Resources = &mcp.ResourceCapabilities{Subscribe: true}
	}
	sub, unsub := opts.SubscribeHandler, opts.UnsubscribeHandler
	opts.SubscribeHandler = func(ctx context.Context, r *mcp.SubscribeRequest) error {
		if own.Owns(r.Params.URI) || sub == nil {
			return own.Subscribe(ctx, r)
		}
		return sub(ctx, r)
	}
	opts.UnsubscribeHandler = func(ctx context.Context, r *mcp.UnsubscribeRequest) error {
		if own.Owns(r.Params.URI) || unsub == nil {
			return own.Unsubscribe(ctx, r)
		}
		return unsub(ctx, r)
	}
}

// tools answers tools/list and tools/call from the catalog, through gw,
// cutting results over their call's token budget (kept, which also reads
// their kept whole as resources); masks what upstreams' prompts and
// resources answer; marks results complete for 2026-07-28 clients; and
// adds what the instances say of themselves to initialize and discover
// results.
func tools(gw Gateway, kept *resultcut.Keeper) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				r := req.(*mcp.ListToolsRequest)
				return gw.List(ctx, PrincipalOf(r.Extra), r.Session), nil
			case "tools/call":
				r := req.(*mcp.CallToolRequest)
				res, err := gw.Call(ctx, r)
				if err == nil && kept != nil {
					res = kept.Apply(ctx, PrincipalOf(r.Extra), r.Params.Name, r.Params.Meta, res)
				}
				return toolresult.For(NewProtocol(r.Session), res), err
			case "prompts/get":
				res, err := next(ctx, method, req)
				p, _ := res.(*mcp.GetPromptResult)
				p, err = toolresult.MaskRead(gw.Secrets(), p, err)
				return toolresult.For(NewProtocol(req.(*mcp.GetPromptRequest).Session), p), err
			case "resources/read":
				r := req.(*mcp.ReadResourceRequest)
				if kept != nil {
					if res, ok, err := kept.ReadResource(ctx, PrincipalOf(r.Extra), r.Params.URI); ok {
						return toolresult.For(NewProtocol(r.Session), res), err
					}
				}
				res, err := next(ctx, method, req)
				p, _ := res.(*mcp.ReadResourceResult)
				p, err = toolresult.MaskRead(gw.Secrets(), p, err)
				if p != nil {
					// Which upstreams a caller may read through the gateway
					// depends on who it is, whatever the upstream said.
					p.CacheScope = catalog.CallerCache.CacheScope
				}
				return toolresult.For(NewProtocol(req.(*mcp.ReadResourceRequest).Session), p), err
			case "initialize", "server/discover":
				res, err := next(ctx, method, req)
				addInstructions(res, gw.Instructions())
				return res, err
			}
			return next(ctx, method, req)
		}
	}
}

// addInstructions appends to an initialize or discover result what the
// instances in use say of themselves (Gateway.Instructions).
func addInstructions(res mcp.Result, text string) {
	switch r := res.(type) {
	case *mcp.InitializeResult:
		r.Instructions += text
	case *mcp.DiscoverResult:
		r.Instructions += text
	}
}

// PrincipalOf is the authenticated caller of a request, nil without auth.
func PrincipalOf(extra *mcp.RequestExtra) *auth.Principal {
	if extra == nil {
		return nil
	}
	return auth.PrincipalFrom(extra.TokenInfo)
}

// The 2026-07-28 protocol requires every tools/call, prompts/get and
// resources/read result to say whether it is complete (resultType). The
// SDK sets it in its own handlers for those methods, which the gateway's
// middleware answers instead; so the gateway marks its results itself
// (toolresult.For), as the SDK would: for a client of that protocol only,
// and never over an input_required result an upstream sent.

// NewProtocol reports whether ss's client speaks 2026-07-28 or later: a
// stateless request's _meta names it, and the SDK records it as the
// session's initialize parameters.
func NewProtocol(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= "2026-07-28"
}
