// Package server is Legate's front door: the MCP server on Streamable HTTP
// and stdio, the call path every tool call takes, and the HTTP endpoints
// around it (/healthz, /readyz).
//
// A Gateway is built once from the configuration and the store:
//
//	gw, err := server.New(ctx, server.Options{Config: cfg, Store: st})
//	...
//	err = gw.ServeHTTP(ctx, ln)   // or gw.ServeStdio(ctx)
//
// The call path is one middleware chain, built in New, through which every
// call passes whatever its front door.
//
// Server assembles; the jobs around the call path live in packages of
// their own, which it builds and wires: auth (who calls), audit (the audit
// rows and the metrics), admin (the admin API, over the operations
// adminOps hands it), policy (rules and the approval inbox), catalog,
// upstream and connectors. Within server, the fast path (fastPath, which
// sees the gateway only through callPath), the prompt and resource proxy
// (proxy) and the approval executor (executor) are types of their own.
package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/audit"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/auth/oauth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connections"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/opkey"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/profiles"
	"github.com/legate-mcp/legate/ratelimit"
	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/server/instancekit"
	"github.com/legate-mcp/legate/server/toolresult"
	"github.com/legate-mcp/legate/server/waitnote"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/telemetry"
	"github.com/legate-mcp/legate/telemetry/spans"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/vault"
)

// Options configure a Gateway.
type Options struct {
	// Config is the loaded configuration; nil means config.Default().
	Config *config.File
	// Store is the state store; required (sqlite.OpenMemory keeps nothing).
	Store store.Store
	// Logger receives logs; nil discards them.
	Logger *slog.Logger
	// Version is reported to clients as the server version.
	Version string
	// Principal is the caller of unauthenticated calls (default: the
	// config's principal, else "local").
	Principal string
	// AdminToken enables the admin API under /admin/v1/ for requests
	// bearing it; empty leaves the API off.
	AdminToken string
	// PanelAddr, when set, overrides panel.listen (LEGATE_PANEL_ADDR).
	PanelAddr string
	// StateDir is the state directory the process resolved (package
	// statedir); connector instances are built in it.
	StateDir string
	// Vault resolves {vault: NAME} credentials; nil makes them fail.
	Vault *vault.Vault
	// Masks is the set of secret values masked in whatever calls return
	// (nil: the gateway's own); the agent's runner shares it, so that its
	// records are masked with the same values.
	Masks *vault.Masks
	// Tools are built-in tools of this gateway beside the registered ones
	// (connectors.Builtins): legate.agent.run.
	Tools []connectors.Builtin
	// StoreWatchInterval is how often a started gateway looks for
	// connectors and upstreams added to or removed from the store
	// (default DefaultStoreWatchInterval).
	StoreWatchInterval time.Duration
}

// Gateway is a running Legate: catalog, call path, MCP server.
type Gateway struct {
	opts     Options
	log      *slog.Logger
	cat      atomic.Pointer[catalog.Catalog]
	call     Handler
	mcp      *mcp.Server
	ready    atomic.Bool
	live     atomic.Pointer[live] // what a reload replaces (reload.go)
	reloader reloader

	upstreams   *upstream.Manager
	inbox       *policy.Inbox
	approvals   *executor
	metrics     *audit.Metrics
	audit       *audit.Writer
	quarantines *quarantineAudit
	stop        context.CancelFunc
	endLife     context.CancelFunc // ends what runs for the gateway's whole life (notifications)
	background  sync.WaitGroup
	auth        *auth.Authenticator
	views       views
	discovery   *profiles.Discovery
	fast        *fastPath
	cold        coldStart
	kit         *instancekit.Kit
	connections *connections.Manager // per-user credentials of instances
	sealer      *rounds.Sealer       // request states of multi-round-trip calls
	tracer      *telemetry.Tracer    // nil: traces off
	masks       *vault.Masks         // every secret value held, masked in what calls return (masks.go)
	opkeys      *opkey.Keys          // each call's operation id: its writes' idempotency key
}

// instance is one built connector instance.
type instance struct {
	def   sources.InstanceDef
	key   string // what it was built from (instanceKey)
	conn  connectors.Connector
	creds sources.Credentials
}

// nativeTool is the catalog target of a native tool.
type nativeTool struct {
	inst *instance // nil for built-in tools
	tool connectors.Tool
}

// DefaultCallTimeout bounds a native call when the config sets none.
const DefaultCallTimeout = 60 * time.Second

// New builds a gateway: it builds every connector instance (without I/O)
// and the catalog. Any configuration error stops it, naming the key path.
func New(ctx context.Context, opts Options) (*Gateway, error) {
	if opts.Config == nil {
		opts.Config = config.Default()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Principal == "" {
		opts.Principal = opts.Config.Principal
	}
	if opts.Principal == "" {
		opts.Principal = "local"
	}
	if opts.Store == nil {
		return nil, errors.New("server: no store")
	}
	if opts.Masks == nil {
		opts.Masks = vault.NewMasks()
	}
	g := &Gateway{opts: opts, log: opts.Logger, masks: opts.Masks, opkeys: opkey.New()}
	g.kit = instancekit.New(opts.Vault, opts.Store.Operations(), g.log)
	g.connections = connections.New(connections.Options{Vault: opts.Vault, Instances: g.Instances, Key: func(ctx context.Context) []byte { return g.kit.Derive(ctx, "connections") },
		Resource: opts.Config.Auth.Resource, Principal: opts.Principal, Logger: g.log, Masks: g.masks,
		Claims: opts.Store.Operations(), // a consent accepted once is refused on every replica
		PerUser: func() bool {
			return slices.ContainsFunc(g.now().instances, func(in *instance) bool { return in.def.PerUserCredential() != "" })
		}})
	g.reloader.g = g
	g.reloader.seen, _ = g.reloader.storedDefs(ctx) // before the definitions are read: a change after it is seen
	g.discovery = &profiles.Discovery{View: g.viewFor, Profile: g.profile, Default: func() string { return g.now().cfg.Profile }, Principal: opts.Principal, Log: g.log}
	l, err := g.reloader.newLive(ctx, opts.Config, nil)
	if err != nil {
		return nil, err
	}
	g.live.Store(l)
	g.inbox = policy.NewInbox(opts.Store.Approvals(), opts.Config.Approvals)
	if g.auth, err = auth.NewAuthenticator(opts.Config.Auth, opts.Store.Tokens(), g.log); err != nil {
		l.close(nil)
		return nil, err
	}
	if _, err = oauth.Setup(ctx, opts.Config.Auth, opts.Store, opts.Vault, g.auth, g.log); err != nil {
		g.auth.Close()
		l.close(nil)
		return nil, err
	}
	g.audit = audit.NewWriter(opts.Store.Audit(), g.log)
	g.quarantines = &quarantineAudit{writer: g.audit, log: opts.Store.Audit(), logger: g.log}
	g.metrics = audit.NewMetrics(scrapeSources{g})
	g.metrics.Register(g.audit)
	g.views = newViews(opts.Config.ViewCacheSize, g.metrics)
	g.approvals = &executor{inbox: g.inbox, policy: func() *policy.Policy { return g.now().policy }, log: g.log, metrics: g.metrics, catalog: g.Catalog, auditRefused: g.auditRefused,
		panelURL: waitnote.PanelURL(cmp.Or(opts.PanelAddr, opts.Config.Panel.Listen))}
	g.approvals.life, g.endLife = context.WithCancel(context.Background())
	g.approvals.record = g.decide
	// A heartbeat runs within a call, which cannot be failed for it: its
	// errors are logged and counted as the executor's are.
	g.inbox.OnError(func(op, id string, err error) { g.approvals.failed(context.Background(), op, id, err) })

	if err := g.newUpstreams(ctx); err != nil {
		g.auth.Close()
		l.close(nil)
		return nil, err
	}
	g.cold = coldStart{ups: g.upstreams, max: time.Duration(opts.Config.ColdStartWait)}
	g.fast = &fastPath{gw: g, lists: g.discovery, cold: &g.cold, metrics: g.metrics, idle: g.sessionIdle()}
	g.sealer = rounds.NewSealer(stateTTL)
	g.mcp = g.newMCPServer()
	g.fast.mcp = g.mcp
	cat, err := g.buildCatalog()
	if err != nil {
		g.upstreams.Close()
		g.auth.Close()
		l.close(nil)
		return nil, err
	}
	g.setCatalog(cat, false)
	if g.tracer, err = telemetry.New(ctx, opts.Config.Telemetry, opts.Version); err != nil {
		g.Close()
		return nil, err
	}
	// The call path, outermost first:
	//  1. recoverPanics: a panic in the gateway's own steps becomes an
	//     error result;
	//  2. observe: one audit row and the metrics of every call, whatever
	//     happens below, latency measured around all of it (a round of a
	//     multi-round-trip call that asks for input is not a call's end);
	//     rounds: a retry's request state opened, a new one sealed
	//     (mrtr.go);
	//  3. logCalls: one log line per failure;
	//  4. limit: a call over a rate limit of limits: fails RATE_LIMITED at
	//     once (no step when no limit is set);
	//  5. decide: the policy allows, denies, or holds the call for approval
	//     (waiting for a decision, then running it exactly once);
	//  6. recoverPanics: a panicking tool becomes an error result, which
	//     the steps above record like any failure;
	//  7. execute: the native connector (within call_timeout) or the upstream
	//     (within its own timeout, extended by progress).
	g.call = chain(g.execute, recoverPanics(g.log), g.observe, g.rounds, logCalls(g.log), limitStep(func() *ratelimit.Limiter { return g.now().limiter }), g.approvals.decide, recoverPanics(g.log))
	g.approvals.call = g.call
	g.ready.Store(true)
	return g, nil
}

// buildCatalog lists the built-in tools and every instance's tools.
func (g *Gateway) buildCatalog() (*catalog.Catalog, error) {
	var entries []*catalog.Entry
	add := func(canonical, source, tenant string, nt *nativeTool) {
		t := nt.tool
		def := &mcp.Tool{
			Name:        canonical,
			Description: t.Description,
			InputSchema: t.InputSchema,
			Annotations: catalog.Annotations(t.Class),
		}
		if t.OutputSchema != nil {
			def.OutputSchema = t.OutputSchema
		}
		entries = append(entries, &catalog.Entry{
			Canonical: canonical,
			Source:    source,
			Tenant:    tenant,
			Class:     t.Class,
			Hash:      entryHash(def, t.Class),
			Tool:      def,
			Target:    nt,
		})
	}
	for _, b := range append(connectors.Builtins(), g.opts.Tools...) {
		add(b.Canonical(), "the built-in "+b.Canonical()+" tool", "", &nativeTool{tool: b.Tool})
	}
	add(profiles.ApprovalTool, "the built-in approval inbox", "", &nativeTool{tool: g.approvals.statusTool()})
	add(profiles.SearchTool, "the built-in tool search", "", &nativeTool{tool: g.discovery.Tool()})
	for _, in := range g.now().instances {
		for _, t := range in.conn.Tools() {
			add(in.def.ID+"."+t.Name, fmt.Sprintf("connector %q (%s)", in.def.ID, in.def.Origin), in.def.Tenant, &nativeTool{inst: in, tool: t})
			entries[len(entries)-1].Aliases = t.CanonicalAliases(in.def.ID)
		}
	}
	for _, t := range g.upstreams.Tools() {
		u, _ := g.upstreams.Upstream(t.Upstream)
		entries = append(entries, &catalog.Entry{
			Canonical: t.Canonical(),
			Source:    fmt.Sprintf("upstream %q (%s)", t.Upstream, u.Origin()),
			Tenant:    u.Config().Tenant,
			Class:     t.Class,
			Hash:      t.Hash,
			Tool:      t.Def,
			Target:    t,
		})
	}
	naming := catalog.Safe
	if g.now().cfg.ToolNames == config.NamesCanonical {
		naming = catalog.Canonical
	}
	return catalog.Build(naming, entries)
}

// MCPServer is the gateway's MCP server, which an in-process client
// reaches over an in-memory transport (the agent).
func (g *Gateway) MCPServer() *mcp.Server { return g.mcp }

// Catalog returns the current catalog.
func (g *Gateway) Catalog() *catalog.Catalog { return g.cat.Load() }

// ErrUnknownTool is returned by Call for a name the catalog does not hold;
// the MCP server answers it with a JSON-RPC invalid-params error.
var ErrUnknownTool = errors.New("unknown tool")

// CallOptions are the optional parts of a call.
type CallOptions struct {
	// Principal is the authenticated caller; nil without authentication
	// (then Caller says who calls, and every tool is visible).
	Principal     *auth.Principal
	Caller        connectors.Caller
	Session       *mcp.ServerSession
	ProgressToken any
	// IdempotencyKey is the client's key for the call's writes
	// (legate.IdempotencyMetaKey in _meta), "" if it gave none.
	IdempotencyKey string

	round      *rounds.Round // a 2026-07-28 client's round (mrtr.go)
	stateToken string
}

// Call runs one call by wire or canonical name through the call path. A
// tool failure is an isError result; the error is only for an unknown tool
// (ErrUnknownTool) or a protocol error to relay (*jsonrpc.Error).
func (g *Gateway) Call(ctx context.Context, name string, args json.RawMessage, o CallOptions) (*mcp.CallToolResult, error) {
	e, ok := g.viewFor(o.Principal).Lookup(name)
	if !ok {
		c := g.callerOf(o)
		row := store.AuditRow{Principal: c.Principal, Tenant: c.Tenant, Session: c.Session, Tool: name}
		if t, err := quarantineError(g.upstreams.Quarantine(), g.Catalog().Naming(), name); err != nil {
			row.Tool, row.Source, row.Class = t.Canonical(), "upstream:"+t.Upstream, string(t.Class)
			row.Decision, row.Outcome = "quarantined", string(legate.CodePolicyDenied)
			g.auditRefused(row)
			return ErrorResult(err), nil
		}
		row.Source, row.Outcome = sourceUnknown, outcomeUnknownTool
		g.auditRefused(row)
		return nil, fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	res, err := g.run(ctx, g.newRequest(e, args, o))
	if err != nil {
		return nil, err
	}
	return res.MCP, nil
}

// callerOf is who makes a call with options o.
func (g *Gateway) callerOf(o CallOptions) connectors.Caller {
	if o.Principal != nil {
		o.Caller.Principal, o.Caller.Tenant = o.Principal.Name, o.Principal.Tenant
	}
	if o.Caller.Principal == "" {
		o.Caller.Principal = g.opts.Principal
	}
	return o.Caller
}

// newRequest starts a call to e.
func (g *Gateway) newRequest(e *catalog.Entry, args json.RawMessage, o CallOptions) *Request {
	r := &Request{Entry: e, Args: args, Caller: g.callerOf(o), Class: classOf(e, args), Start: time.Now(), Session: o.Session,
		ProgressToken: o.ProgressToken, ArgsHash: policy.ArgsHash(args), round: o.round, stateToken: o.stateToken, principal: o.Principal}
	r.OperationID = g.opkeys.For(opkey.Call{Tenant: r.Caller.Tenant, Principal: r.Caller.Principal, Tool: e.Canonical, ArgsHash: r.ArgsHash,
		Class: r.Class, ClientKey: o.IdempotencyKey}, g.now().repeatWindow)
	return r
}

// run takes r along the call path. As for Call, a failure is an isError
// result unless it is a protocol error to relay, or errHandBack for a
// relayed call that needs approval.
func (g *Gateway) run(ctx context.Context, r *Request) (*Result, error) {
	res, err := g.call(ctx, r)
	if err == errHandBack {
		return nil, err
	}
	if rpcErr := protocolError(err); rpcErr != nil {
		return nil, rpcErr
	}
	if err != nil {
		return decoded(errorResultFor(r.Entry, err)), nil
	}
	return res, nil
}

// fastable reports whether the HTTP fast path can answer a call r
// (Request.relay): a native tool, whose result it encodes as the SDK
// would, or an upstream's tool that Relay relays as bytes. Calls of
// per_client, stdio and SSE upstreams take the SDK's path, which routes
// their requests to the client.
func (g *Gateway) fastable(r *Request) bool {
	switch t := r.Entry.Target.(type) {
	case *nativeTool: // a search may change the session's list, which the SDK notifies; asking to connect takes the SDK's session
		asks := t.inst != nil && autoAuth(g, r) && connections.MayAsk(t.inst.def.PerUserCredential() != "", connections.Asker{Session: r.Session})
		return r.Entry.Canonical != profiles.SearchTool && !asks
	case *upstream.Tool: // as for an instance; any other upstream's calls pay one field's read
		return g.upstreams.Relayable(t) && !(connections.MayAsk(t.PerPrincipal, connections.Asker{Session: r.Session}) && autoAuth(g, r))
	}
	return false
}

// errorResultFor is ErrorResult for a call to e. A tool that declares an
// output schema has its error details in _meta only, not in structured
// content, which clients check against that schema even on errors.
func errorResultFor(e *catalog.Entry, err error) *mcp.CallToolResult {
	res := ErrorResult(err)
	if e.Tool.OutputSchema != nil {
		res.StructuredContent = nil
	}
	return res
}

// ErrorMetaKey holds a gateway error's details in every error result's
// _meta, the one place they are for every tool.
const ErrorMetaKey = legate.ErrorMetaKey

// classOf is the class of one call: a native tool may class it from its
// arguments; an upstream tool's class is fixed in its catalog entry.
func classOf(e *catalog.Entry, args json.RawMessage) legate.Class {
	if nt, ok := e.Target.(*nativeTool); ok {
		return nt.tool.ClassOf(args)
	}
	return e.Class
}

// execute is the innermost handler: it runs the tool at its source.
// What it returns is masked (masks.go).
func (g *Gateway) execute(ctx context.Context, r *Request) (res *Result, err error) {
	ctx, step := spans.Step(ctx, "execute")
	defer step.End()
	defer func() { res, err = maskResult(g.masks.Secrets(), res, err) }()
	switch t := r.Entry.Target.(type) {
	case *nativeTool:
		res, err := g.executeNative(ctx, t, r)
		return decoded(res), err
	case *upstream.Tool:
		c := upstream.Client{Session: r.Session, ProgressToken: r.ProgressToken, Round: r.round, Tenant: r.Caller.Tenant, Principal: r.Caller.Principal}
		if r.relay != nil {
			c.Progress = r.relay.progress
		}
		rel, res, err := callUpstream(ctx, g, t, r, c)
		if t.PerPrincipal && asksToConnect(g, r, err) {
			actx, cancel := context.WithTimeout(ctx, g.upstreams.Timeout(t)) // the wait for the connection
			again, ir, aerr := g.connections.AutoAuth(actx, err, t.Upstream, r.Caller, connections.Asker{Session: r.Session, Round: r.round})
			cancel()
			if !again {
				return decoded(ir), aerr
			}
			rel, res, err = callUpstream(ctx, g, t, r, c)
		}
		if rel.JSON == nil {
			return decoded(res), err
		}
		return relayed(rel), nil
	}
	return nil, fmt.Errorf("tool %s has no executor", r.Entry.Canonical)
}

// executeNative runs a native tool within the call timeout.
func (g *Gateway) executeNative(ctx context.Context, nt *nativeTool, r *Request) (*mcp.CallToolResult, error) {
	call := &connectors.Call{
		Tool:        nt.tool.Name,
		Args:        r.Args,
		Caller:      r.Caller,
		OperationID: r.OperationID,
		Credentials: sources.Credentials{},
		Retried:     func(string) { g.metrics.Retries.WithLabelValues(r.Entry.Canonical).Inc() },
	}
	if nt.inst != nil {
		creds := nt.inst.creds
		creds.Tenant = r.Caller.Tenant
		call.Credentials = g.connections.Credentials(nt.inst.def, creds, r.Caller)
		g.kit.ForCall(ctx, nt.inst.def.ID, call)
	} else {
		ctx = profiles.WithCaller(ctx, r.principal, r.Session)
	}
	timeout := g.now().callTimeout
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := nt.tool.Run(ctx, call)
	if nt.inst != nil && asksToConnect(g, r, err) {
		again, ir, aerr := g.connections.AutoAuth(ctx, err, nt.inst.def.ID, r.Caller, connections.Asker{Session: r.Session, Round: r.round})
		if !again {
			return ir, aerr
		}
		res, err = nt.tool.Run(ctx, call)
	}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, &legate.Error{Code: legate.CodeTimeout, Message: fmt.Sprintf("%s did not answer within %s", r.Entry.Canonical, timeout), Err: err}
		}
		return nil, err
	}
	return toolresult.Native(res)
}

// callUpstream makes call r to t as c: relayed as bytes on the fast path
// (rel.JSON set when it could be).
func callUpstream(ctx context.Context, g *Gateway, t *upstream.Tool, r *Request, c upstream.Client) (rel upstream.Relayed, res *mcp.CallToolResult, err error) {
	if t.PerPrincipal {
		c.Round = connections.ForSource(c.Round)
	}
	if r.relay == nil {
		res, err = g.upstreams.Call(ctx, t, r.Args, c)
		return rel, res, err
	}
	return g.upstreams.Relay(ctx, t, r.Args, c)
}

// asksToConnect reports whether call r, which failed with err, asks its
// user to connect (auto_auth, which a session's fast path cannot ask).
func asksToConnect(g *Gateway, r *Request, err error) bool {
	return legate.CodeOf(err) == legate.CodeNotConnected && autoAuth(g, r) && (r.relay == nil || r.Session == nil)
}

// autoAuth reports whether r's profile asks its user to connect (auto_auth;
// a function: Gateway has methods enough).
func autoAuth(g *Gateway, r *Request) bool {
	prof := config.Profile{}
	if p := g.discovery.WithDefault(r.principal); p != nil {
		prof, _ = g.profile(p.Profile)
	}
	return prof.AsksToConnect()
}

// Test runs every instance's connection test and returns the failures by id.
func (g *Gateway) Test(ctx context.Context, ids ...string) map[string]error {
	out := map[string]error{}
	for _, in := range g.now().instances {
		if len(ids) > 0 && !slices.Contains(ids, in.def.ID) {
			continue
		}
		out[in.def.ID] = in.conn.Test(ctx, in.creds)
	}
	return out
}

// Start begins the background work: connecting upstreams and refreshing
// their tool caches, writing audit rows, and running approved requests
// (see runApproved). Call it for a serving gateway; one made for a single
// CLI command needs only StartAudit.
func (g *Gateway) Start(ctx context.Context) {
	ctx = g.startAudit(ctx, time.Duration(g.opts.Config.Audit.Retention)) // its default applied when the config was loaded
	g.quarantines.start()
	g.upstreams.Start(ctx)
	g.cold.started.Store(g.cold.max > 0)
	g.background.Go(func() { g.approvals.runApproved(ctx) })
	g.background.Go(func() { g.inbox.Follow(ctx) }) // wake waiting calls on other replicas' decisions
	interval := g.opts.StoreWatchInterval
	if interval == 0 {
		interval = DefaultStoreWatchInterval
	}
	g.background.Go(func() { g.reloader.watchStore(ctx, interval) })
	g.background.Go(func() { g.kit.Prune(ctx) })
}

// StartAudit starts the audit writer alone, for a gateway made for one
// CLI command such as `legate tools call`.
func (g *Gateway) StartAudit(ctx context.Context) { g.startAudit(ctx, 0) }

// startAudit starts the audit writer (pruning past retention when it is
// positive) and returns the context background work runs under, ended by Close.
func (g *Gateway) startAudit(ctx context.Context, retention time.Duration) context.Context {
	ctx, g.stop = context.WithCancel(context.WithoutCancel(ctx))
	g.background.Go(func() { g.audit.Run(ctx, retention) })
	return ctx
}

// Upstreams returns the upstream manager.
func (g *Gateway) Upstreams() *upstream.Manager { return g.upstreams }

// Close cancels the approval notifications and the fetch of the issuer's
// keys in flight and waits for them, stops the background work (writing the last audit rows), ends upstream
// sessions and processes and releases the instances' resources.
func (g *Gateway) Close() error {
	g.endLife()
	g.approvals.notifying.Wait()
	g.auth.Close()
	g.upstreams.Close()
	if g.stop != nil {
		g.stop()
	}
	g.background.Wait()
	g.tracer.Shutdown(context.Background()) // sends the last spans
	return g.now().close(nil)
}

// ConnectionsOf returns the per-user connections of g's instances (a
// function, not a method: Gateway has methods enough).
func ConnectionsOf(g *Gateway) *connections.Manager { return g.connections }

// Instances returns the definitions of the built connector instances.
func (g *Gateway) Instances() []sources.InstanceDef {
	instances := g.now().instances
	out := make([]sources.InstanceDef, len(instances))
	for i, in := range instances {
		out[i] = in.def
	}
	return out
}
