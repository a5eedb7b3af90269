package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/paramheader"
	"github.com/legate-mcp/legate/upstream"
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
	px := &proxy{ups: g.upstreams, log: g.log, naming: func() catalog.Naming { return g.Catalog().Naming() }}
	opts := &mcp.ServerOptions{
		Logger: g.log,
		Capabilities: &mcp.ServerCapabilities{
			Tools:   &mcp.ToolCapabilities{ListChanged: true},
			Logging: &mcp.LoggingCapabilities{},
		},
		InitializedHandler: g.fast.trackSession,
		Instructions: "Legate is a gateway: its tools come from the connectors and MCP servers its operator configured. " +
			"Sensitive calls may wait for a person's approval.",
	}
	if len(g.upstreams.IDs()) > 0 {
		// Upstreams may offer prompts, resources and completion: proxy them.
		opts.Capabilities.Prompts = &mcp.PromptCapabilities{}
		opts.Capabilities.Resources = &mcp.ResourceCapabilities{Subscribe: true}
		opts.Capabilities.Completions = &mcp.CompletionCapabilities{}
		opts.SubscribeHandler = px.subscribe
		opts.UnsubscribeHandler = px.unsubscribe
		opts.CompletionHandler = px.complete
	}
	impl := &mcp.Implementation{Name: "legate", Title: "Legate", Version: version}
	g.fast.serverInfo, _ = json.Marshal(impl)
	s := mcp.NewServer(impl, opts)
	s.AddReceivingMiddleware(g.toolsMiddleware, px.proxyMiddleware)
	s.AddSendingMiddleware(upstream.CaptureElicitResult)
	return s
}

func (g *Gateway) toolsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			r := req.(*mcp.ListToolsRequest)
			g.cold.wait(ctx)
			return g.viewFor(principalOf(r.Extra)).ListResult(), nil
		case "tools/call":
			r := req.(*mcp.CallToolRequest)
			res, err := g.callTool(ctx, r)
			return completeCallResult(r.Session, res), err
		}
		return next(ctx, method, req)
	}
}

func (g *Gateway) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	o := CallOptions{Session: req.Session, ProgressToken: req.Params.GetProgressToken()}
	if req.Session != nil {
		o.Caller.Session = req.Session.ID()
	}
	o.Principal = principalOf(req.Extra)
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
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", req.Params.Name)}
	}
	return res, err
}

// principalOf is the authenticated caller of a request, nil without auth.
func principalOf(extra *mcp.RequestExtra) *auth.Principal {
	if extra == nil {
		return nil
	}
	return auth.PrincipalFrom(extra.TokenInfo)
}

// ErrorResult turns a failed call into the result a client sees: isError,
// the text "CODE: message", and {"error": {code, message,
// retry_after_seconds}} as structured content.
func ErrorResult(err error) *mcp.CallToolResult {
	ce := &legate.Error{Code: legate.CodeOf(err), Message: err.Error()}
	errors.As(err, &ce)
	body := map[string]any{"code": ce.Code, "message": ce.Message}
	for k, v := range ce.Details {
		body[k] = v
	}
	if ce.RetryAfter > 0 {
		body["retry_after_seconds"] = ce.RetryAfter.Seconds()
	}
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: string(ce.Code) + ": " + ce.Message}},
		StructuredContent: map[string]any{"error": body},
	}
}

// NativeResult turns a connector's result into an MCP result: its text
// (or its JSON) and its structured content, always a JSON object.
func NativeResult(res *legate.Result) (*mcp.CallToolResult, error) {
	out := &mcp.CallToolResult{Content: []mcp.Content{}}
	if res == nil {
		return out, nil
	}
	text := res.Text
	if res.Structured != nil {
		b, err := json.Marshal(res.Structured)
		if err != nil {
			return nil, &legate.Error{Code: legate.CodeAdapterMapping, Message: "result is not JSON", Err: err}
		}
		if text == "" {
			text = string(b)
		}
		if len(b) == 0 || b[0] != '{' {
			// Structured content must be an object.
			b = append(append([]byte(`{"result":`), b...), '}')
		}
		out.StructuredContent = json.RawMessage(b)
	}
	out.Content = append(out.Content, &mcp.TextContent{Text: text})
	return out, nil
}
