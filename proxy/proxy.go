// Package proxy answers the prompt, resource and completion methods of
// MCP clients from the upstreams that offer them, live: prompt names are
// namespaced like tools (mcp.<id>.<prompt>, shown under the catalog's
// naming) unless the upstream has prefix: false; resource URIs are kept as
// they are, but for the ui:// resources of MCP Apps (package mcpapps),
// shown as ui://mcp.<id>/… to the callers that may see apps and to no one
// else. A caller sees the upstreams of its tenant and the shared ones
// that its profile shows (profiles.Discovery.Shows).
package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/mcpapps"
	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/upstream"
)

// Proxy answers the prompt, resource and completion methods from the
// upstreams.
type Proxy struct {
	ups    *upstream.Manager
	log    *slog.Logger
	naming func() catalog.Naming // the catalog's current naming
	sealer *rounds.Sealer        // request states of multi-round-trip requests
	shows  Shows
	apps   func(p *auth.Principal) func(id string) bool
}

// Shows reports which upstreams the caller p (nil without authentication)
// sees the prompts and resources of, by id; a nil func shows every one.
type Shows func(ctx context.Context, p *auth.Principal) func(id string) bool

// New returns a Proxy to the upstreams of ups; naming gives the catalog's
// current naming, sealer issues the request states of multi-round-trip
// requests (rounds.go), shows narrows each caller's upstreams (nil: to
// its tenant's and the shared ones only), apps reports whether a caller's
// profile lets it see MCP Apps (nil: every caller may, where the upstream
// allows them).
func New(ups *upstream.Manager, log *slog.Logger, naming func() catalog.Naming, sealer *rounds.Sealer, shows Shows, apps func(p *auth.Principal) func(id string) bool) *Proxy {
	return &Proxy{ups: ups, log: log, naming: naming, sealer: sealer, shows: shows, apps: apps}
}

// Middleware answers the prompt and resource methods, and passes a
// client's logging level on to its upstream sessions.
func (pr *Proxy) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch r := req.(type) {
		case *mcp.ListPromptsRequest:
			return pr.listPrompts(ctx, pr.clientOf(ctx, r.Session, r.Extra))
		case *mcp.GetPromptRequest:
			return pr.getPrompt(ctx, pr.clientOf(ctx, r.Session, r.Extra), callerOf(r.Extra), r.Params)
		case *mcp.ListResourcesRequest:
			return pr.listResources(ctx, pr.clientOf(ctx, r.Session, r.Extra))
		case *mcp.ListResourceTemplatesRequest:
			return pr.listResourceTemplates(ctx, pr.clientOf(ctx, r.Session, r.Extra))
		case *mcp.ReadResourceRequest:
			if mcpapps.IsUI(r.Params.URI) {
				return pr.readUI(ctx, pr.clientOf(ctx, r.Session, r.Extra), r.Params)
			}
			return pr.readResource(ctx, pr.clientOf(ctx, r.Session, r.Extra), callerOf(r.Extra), r.Params)
		case *mcp.ServerRequest[*mcp.SetLoggingLevelParams]:
			res, err := next(ctx, method, req)
			if err == nil {
				pr.forwardLogLevel(ctx, pr.clientOf(ctx, r.Session, r.Extra), r.Params)
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// listTimeout bounds one upstream's part of an aggregated list (connecting
// included): a slow upstream is left out of that list rather than holding
// up every other's.
const listTimeout = 1500 * time.Millisecond

// client is a request's client: the upstream side's view of it, and
// which upstreams its profile shows (nil: every one).
type client struct {
	upstream.Client
	shows func(id string) bool
	apps  func(id string) bool // whose MCP Apps the caller's profile shows, by upstream id
}

// clientOf is the upstream side's view of a request's client: its session
// and, when authenticated, its tenant (which limits the upstreams it
// sees), and the upstreams its profile shows.
func (pr *Proxy) clientOf(ctx context.Context, ss *mcp.ServerSession, extra *mcp.RequestExtra) client {
	c := client{Client: upstream.Client{Session: ss}}
	p := principalOf(extra)
	if p != nil {
		c.Tenant, c.Scoped = p.Tenant, true
	}
	if pr.shows != nil {
		c.shows = pr.shows(ctx, p)
	}
	c.apps = func(string) bool { return true }
	if pr.apps != nil {
		c.apps = pr.apps(p)
	}
	return c
}

// callerOf names the authenticated caller of a request, "" without auth.
func callerOf(extra *mcp.RequestExtra) string {
	if p := principalOf(extra); p != nil {
		return p.Name
	}
	return ""
}

// principalOf is the authenticated caller of a request, nil without auth.
func principalOf(extra *mcp.RequestExtra) *auth.Principal {
	if extra == nil {
		return nil
	}
	return auth.PrincipalFrom(extra.TokenInfo)
}

// upstreamIDs are the upstreams c may see.
func (pr *Proxy) upstreamIDs(c client) []string {
	var ids []string
	for _, id := range pr.ups.IDs() {
		if pr.sees(c, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// sees reports whether c may see the upstream id: of its tenant or shared,
// and shown by its profile.
func (pr *Proxy) sees(c client, id string) bool {
	return pr.ups.Visible(id, c.Client) && (c.shows == nil || c.shows(id))
}

// eachUpstream runs fn on every upstream whose session offers what has
// reports, concurrently, each within listTimeout; failures are logged and
// skipped, so one bad or slow upstream cannot break or stall a list.
func (pr *Proxy) eachUpstream(ctx context.Context, c client, has func(*mcp.ServerCapabilities) bool, fn func(u *upstream.Upstream, cs *mcp.ClientSession) error) {
	var wg sync.WaitGroup
	for _, id := range pr.upstreamIDs(c) {
		u, _ := pr.ups.Upstream(id)
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, listTimeout)
			defer cancel()
			cs, err := pr.ups.Session(ctx, id, c.Client)
			if err != nil {
				pr.log.Debug("upstream skipped", "upstream", id, "error", err)
				return
			}
			if caps := cs.InitializeResult().Capabilities; caps == nil || !has(caps) {
				return
			}
			if err := fn(u, cs); err != nil {
				pr.log.Warn("upstream request failed", "upstream", id, "error", err)
			}
		})
	}
	wg.Wait()
}

// promptName is the name clients see for an upstream's prompt.
func (pr *Proxy) promptName(u *upstream.Upstream, name string) string {
	if !u.Config().Prefixed() {
		return name
	}
	return catalog.WireName("mcp."+u.Config().ID+"."+name, pr.naming())
}

func (pr *Proxy) listPrompts(ctx context.Context, c client) (*mcp.ListPromptsResult, error) {
	var mu sync.Mutex
	out := &mcp.ListPromptsResult{Prompts: []*mcp.Prompt{}, Cacheable: catalog.CallerCache}
	pr.eachUpstream(ctx, c, func(s *mcp.ServerCapabilities) bool { return s.Prompts != nil },
		func(u *upstream.Upstream, cs *mcp.ClientSession) error {
			for p, err := range cs.Prompts(ctx, nil) {
				if err != nil {
					return err
				}
				q := *p
				q.Name = pr.promptName(u, p.Name)
				mu.Lock()
				out.Prompts = append(out.Prompts, &q)
				mu.Unlock()
			}
			return nil
		})
	return out, nil
}

// resolvePrompt finds the upstream and original name of a prompt as the
// client named it.
func (pr *Proxy) resolvePrompt(ctx context.Context, c client, name string) (id string, cs *mcp.ClientSession, orig string, err error) {
	for _, id := range pr.upstreamIDs(c) {
		u, _ := pr.ups.Upstream(id)
		orig = name
		if u.Config().Prefixed() {
			var ok bool
			orig, ok = strings.CutPrefix(name, pr.promptName(u, ""))
			if !ok || orig == "" {
				continue
			}
		}
		cs, err = pr.ups.Session(ctx, id, c.Client)
		if err != nil {
			if u.Config().Prefixed() {
				return "", nil, "", err
			}
			continue
		}
		if !u.Config().Prefixed() {
			if !hasPrompt(ctx, cs, orig) {
				continue
			}
		}
		return id, cs, orig, nil
	}
	return "", nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", name)}
}

func hasPrompt(ctx context.Context, cs *mcp.ClientSession, name string) bool {
	if cs.InitializeResult().Capabilities.Prompts == nil {
		return false
	}
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			return false
		}
		if p.Name == name {
			return true
		}
	}
	return false
}

func (pr *Proxy) getPrompt(ctx context.Context, c client, who string, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	id, cs, orig, err := pr.resolvePrompt(ctx, c, p.Name)
	if err != nil {
		return nil, err
	}
	q := *p
	q.Name, q.Meta = orig, upstreamMeta(p.Meta)
	round, err := pr.openRound(c.Client, who, "prompts/get", p.Name, p.Meta, p.InputResponses, p.RequestState)
	switch {
	case err != nil:
		return nil, err
	case round != nil && round.upstream != "" && round.upstream != id:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState: issued for another upstream"}
	case round != nil:
		q.Meta, q.InputResponses, q.RequestState = nil, nil, ""
		var res mcp.GetPromptResult
		if ok, err := pr.roundTrip(ctx, id, c.Client, round, "prompts/get", orig, &q, &res); ok {
			return &res, err
		}
		q.Meta, q.InputResponses, q.RequestState = upstreamMeta(p.Meta), p.InputResponses, round.State
	}
	res, err := cs.GetPrompt(ctx, &q)
	return fulfil(ctx, c.Client, res, err, func(in mcp.InputResponseMap, state string) (*mcp.GetPromptResult, error) {
		q.InputResponses, q.RequestState = in, state
		return cs.GetPrompt(ctx, &q)
	})
}

// upstreamMeta is the _meta of a client's request as it is forwarded: the
// keys by which a 2026-07-28 request names its protocol, client and
// capabilities describe the client's exchange with the gateway, not the
// gateway's session with the upstream, which would refuse them.
func upstreamMeta(m mcp.Meta) mcp.Meta {
	var out mcp.Meta
	for k, v := range m {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") {
			continue
		}
		if out == nil {
			out = mcp.Meta{}
		}
		out[k] = v
	}
	return out
}

func (pr *Proxy) listResources(ctx context.Context, c client) (*mcp.ListResourcesResult, error) {
	var mu sync.Mutex
	out := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}, Cacheable: catalog.CallerCache}
	pr.eachUpstream(ctx, c, func(s *mcp.ServerCapabilities) bool { return s.Resources != nil },
		func(u *upstream.Upstream, cs *mcp.ClientSession) error {
			for r, err := range cs.Resources(ctx, nil) {
				if err != nil {
					return err
				}
				if mcpapps.IsUI(r.URI) {
					if !c.apps(u.Config().ID) || !u.Config().AllowMCPUI {
						continue
					}
					q := *r
					q.URI = mcpapps.LocalURI(u.Config().ID, r.URI)
					r = &q
				}
				mu.Lock()
				out.Resources = append(out.Resources, r)
				mu.Unlock()
			}
			return nil
		})
	return out, nil
}

func (pr *Proxy) listResourceTemplates(ctx context.Context, c client) (*mcp.ListResourceTemplatesResult, error) {
	var mu sync.Mutex
	out := &mcp.ListResourceTemplatesResult{ResourceTemplates: []*mcp.ResourceTemplate{}, Cacheable: catalog.CallerCache}
	pr.eachUpstream(ctx, c, func(s *mcp.ServerCapabilities) bool { return s.Resources != nil },
		func(u *upstream.Upstream, cs *mcp.ClientSession) error {
			for r, err := range cs.ResourceTemplates(ctx, nil) {
				if err != nil {
					return err
				}
				if mcpapps.IsUI(r.URITemplate) {
					if !c.apps(u.Config().ID) || !u.Config().AllowMCPUI {
						continue
					}
					q := *r
					q.URITemplate = mcpapps.LocalURI(u.Config().ID, r.URITemplate)
					r = &q
				}
				mu.Lock()
				out.ResourceTemplates = append(out.ResourceTemplates, r)
				mu.Unlock()
			}
			return nil
		})
	return out, nil
}

// readResource asks the upstreams in order until one has the URI; the
// retry of a round, the upstream that asked for input.
func (pr *Proxy) readResource(ctx context.Context, c client, who string, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	var last error = &jsonrpc.Error{Code: mcp.CodeResourceNotFound, Message: fmt.Sprintf("resource %q not found", p.URI)}
	round, err := pr.openRound(c.Client, who, "resources/read", p.URI, p.Meta, p.InputResponses, p.RequestState)
	if err != nil {
		return nil, err
	}
	q := *p
	q.Meta = upstreamMeta(p.Meta)
	for _, id := range pr.upstreamIDs(c) {
		if round != nil && round.upstream != "" && round.upstream != id {
			continue
		}
		cs, err := pr.ups.Session(ctx, id, c.Client)
		if err != nil || cs.InitializeResult().Capabilities.Resources == nil {
			continue
		}
		if round != nil {
			var res mcp.ReadResourceResult
			own := mcp.ReadResourceParams{URI: p.URI}
			if ok, err := pr.roundTrip(ctx, id, c.Client, round, "resources/read", p.URI, &own, &res); ok {
				if err == nil || !notFound(err) {
					return &res, err
				}
				continue
			}
			q.RequestState = round.State
		}
		res, err := cs.ReadResource(ctx, &q)
		res, err = fulfil(ctx, c.Client, res, err, func(in mcp.InputResponseMap, state string) (*mcp.ReadResourceResult, error) {
			q.InputResponses, q.RequestState = in, state
			return cs.ReadResource(ctx, &q)
		})
		if err == nil {
			return res, nil
		}
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) {
			last = err
		}
	}
	return nil, last
}

// readUI reads a ui:// resource from the one upstream its URI names
// (ui://mcp.<id>/…), when that upstream allows apps, the caller may see it
// and apps: any other ui:// URI is not found, whichever upstream has it.
// The contents keep their mime type and _meta.ui (CSP, permissions), their
// URIs shown in Legate's namespace.
func (pr *Proxy) readUI(ctx context.Context, c client, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	notFound := &jsonrpc.Error{Code: mcp.CodeResourceNotFound, Message: fmt.Sprintf("resource %q not found", p.URI)}
	id, orig, ok := mcpapps.UpstreamURI(p.URI)
	if !ok {
		notFound.Message += fmt.Sprintf(": an app's resource is read as the URI its tool's _meta.ui gives, %smcp.<upstream>/…", mcpapps.Scheme)
		return nil, notFound
	}
	u, known := pr.ups.Upstream(id)
	if !c.apps(id) || !known || !u.Config().AllowMCPUI || !pr.sees(c, id) {
		return nil, notFound
	}
	cs, err := pr.ups.Session(ctx, id, c.Client)
	if err != nil {
		return nil, err
	}
	if cs.InitializeResult().Capabilities.Resources == nil {
		return nil, notFound
	}
	q := *p
	q.URI, q.Meta = orig, upstreamMeta(p.Meta)
	res, err := cs.ReadResource(ctx, &q)
	res, err = fulfil(ctx, c.Client, res, err, func(in mcp.InputResponseMap, state string) (*mcp.ReadResourceResult, error) {
		q.InputResponses, q.RequestState = in, state
		return cs.ReadResource(ctx, &q)
	})
	if err != nil {
		return nil, err
	}
	return mcpapps.Contents(id, res), nil
}

// Subscribe forwards a resource subscription to the upstreams offering
// subscriptions; the SDK server records it and delivers the upstream's
// resources/updated (relayed through OnResourceUpdated) to the subscriber.
func (pr *Proxy) Subscribe(ctx context.Context, r *mcp.SubscribeRequest) error {
	return pr.forEachSubscriber(ctx, pr.clientOf(ctx, r.Session, r.Extra), func(cs *mcp.ClientSession) error {
		return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: r.Params.URI})
	})
}

// Unsubscribe ends a resource subscription at the upstreams.
func (pr *Proxy) Unsubscribe(ctx context.Context, r *mcp.UnsubscribeRequest) error {
	return pr.forEachSubscriber(ctx, pr.clientOf(ctx, r.Session, r.Extra), func(cs *mcp.ClientSession) error {
		return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: r.Params.URI})
	})
}

func (pr *Proxy) forEachSubscriber(ctx context.Context, c client, fn func(*mcp.ClientSession) error) error {
	var errs []error
	ok := false
	pr.eachUpstream(ctx, c, func(s *mcp.ServerCapabilities) bool { return s.Resources != nil && s.Resources.Subscribe },
		func(u *upstream.Upstream, cs *mcp.ClientSession) error {
			if err := fn(cs); err != nil {
				errs = append(errs, err)
				return err
			}
			ok = true
			return nil
		})
	if !ok && len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// Complete forwards completion to the upstream owning the prompt, or to
// the upstreams in order for a resource reference.
func (pr *Proxy) Complete(ctx context.Context, r *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	c := pr.clientOf(ctx, r.Session, r.Extra)
	p := *r.Params
	p.Meta = upstreamMeta(p.Meta)
	if p.Ref != nil && p.Ref.Type == "ref/prompt" {
		_, cs, orig, err := pr.resolvePrompt(ctx, c, p.Ref.Name)
		if err != nil {
			return nil, err
		}
		ref := *p.Ref
		ref.Name = orig
		p.Ref = &ref
		return cs.Complete(ctx, &p)
	}
	var last error = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no upstream completes this reference"}
	for _, id := range pr.upstreamIDs(c) {
		cs, err := pr.ups.Session(ctx, id, c.Client)
		if err != nil || cs.InitializeResult().Capabilities.Completions == nil {
			continue
		}
		res, err := cs.Complete(ctx, &p)
		if err == nil {
			return res, nil
		}
		last = err
	}
	return nil, last
}

// forwardLogLevel passes a client's logging level on to its per-client
// upstream sessions, so upstreams send what it asked for.
func (pr *Proxy) forwardLogLevel(ctx context.Context, c client, p *mcp.SetLoggingLevelParams) {
	for _, id := range pr.upstreamIDs(c) {
		u, _ := pr.ups.Upstream(id)
		if u.Config().Session != upstream.SessionPerClient {
			continue
		}
		cs, err := pr.ups.Session(ctx, id, c.Client)
		if err != nil || cs.InitializeResult().Capabilities.Logging == nil {
			continue
		}
		if err := cs.SetLoggingLevel(ctx, p); err != nil {
			pr.log.Debug("forwarding logging level", "upstream", id, "error", err)
		}
	}
}
