// Package server is Legate's front door: it assembles the gateway from the
// configuration and the store, serves MCP on Streamable HTTP and stdio
// with the HTTP endpoints around it (/healthz, /readyz, /metrics, the
// admin API), and holds the call path every tool call takes.
//
// A Gateway is built once from the configuration and the store:
//
//	gw, err := server.New(ctx, server.Options{Config: cfg, Store: st})
//	...
//	err = gw.ServeHTTP(ctx, ln)   // or gw.ServeStdio(ctx)
//
// The call path is one chain of steps, built once in New, through which
// every call passes whatever its front door: callpath.go lists the steps
// in order (callPath), one type each, from recovering panics to running
// the tool.
//
// Server assembles; the jobs around the call path live in packages of
// their own, which it builds and wires: auth, audit (audit rows, metrics,
// quarantine events), admin (over the operations adminOps hands it),
// policy (rules, the approval inbox and its executor, which reaches the
// call path through the functions New gives it), catalog, profiles,
// upstream, connectors and proxy. Within server's tree: instances (the
// connector instances a configuration builds, native tools' catalog
// entries), sdkserver (the go-sdk MCP server, which sees the gateway
// through sdkserver.Gateway) and fastpath (the HTTP fast paths past the
// SDK, which see it only through fastpath.Gateway, and their sessions).
package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/audit"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/auth/oauth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connections"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/hooks"
	"github.com/legate-mcp/legate/mcpapps"
	"github.com/legate-mcp/legate/operations"
	"github.com/legate-mcp/legate/opkey"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/profiles"
	"github.com/legate-mcp/legate/provenance"
	"github.com/legate-mcp/legate/proxy"
	"github.com/legate-mcp/legate/resultcut"
	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/server/coldstart"
	"github.com/legate-mcp/legate/server/fastpath"
	"github.com/legate-mcp/legate/server/instancekit"
	"github.com/legate-mcp/legate/server/instances"
	"github.com/legate-mcp/legate/server/sdkserver"
	"github.com/legate-mcp/legate/server/toolresult"
	"github.com/legate-mcp/legate/server/waitnote"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/tasks"
	"github.com/legate-mcp/legate/telemetry"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/cache"
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
	// PanelAddr, when set, overrides panel.listen (LEGATE_PANEL_ADDR);
	// PanelListener, when set, is bound there already and served.
	PanelAddr     string
	PanelListener net.Listener
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

	upstreams    *upstream.Manager
	inbox        *policy.Inbox
	decisions    *operations.Approvals // every decision, audited and measured
	approvals    *policy.Executor
	metrics      *audit.Metrics
	audit        *audit.Writer
	quarantines  *audit.Quarantines
	stop         context.CancelFunc
	background   sync.WaitGroup
	auth         *auth.Authenticator
	views        *profiles.Views
	discovery    *profiles.Discovery
	fast         *fastPath
	cold         *coldstart.Wait
	kit          *instancekit.Kit
	hooks        *hooks.Hooks         // webhook deliveries at /hooks/{instance}, their events to clients
	connections  *connections.Manager // per-user credentials of instances
	sealer       *rounds.Sealer       // request states of multi-round-trip calls
	tracer       *telemetry.Tracer    // nil: traces off
	masks        *vault.Masks         // every secret value held, masked in what calls return (masks.go)
	opkeys       *opkey.Keys          // each call's operation id: its writes' idempotency key
	tasks        *tasks.Tasks         // held calls offered as tasks (2026-07-28's tasks extension)
	instructions string               // the MCP server's own (what Legate is, its connectors), before the instances' (sdkGateway.Instructions)
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
	g.kit = instancekit.New(opts.Vault, opts.Store.Operations(), g.log, func(id string) { g.metrics.DuplicatesPrevented.WithLabelValues(id).Inc() })
	g.connections = connections.New(connections.Options{Vault: opts.Vault, Instances: g.Instances, Key: func(ctx context.Context) []byte { return g.kit.Derive(ctx, "connections") },
		Resource: opts.Config.Auth.Resource, Principal: opts.Principal, Logger: g.log, Masks: g.masks,
		Claims: opts.Store.Operations(), // a consent accepted once is refused on every replica
		PerUser: func() bool {
			return slices.ContainsFunc(g.now().instances, func(in *instances.Instance) bool { return in.Def.PerUserCredential() != "" })
		}})
	g.reloader.g = g
	g.reloader.seen, _ = sources.StoredFingerprint(ctx, opts.Store) // before the definitions are read: a change after it is seen
	g.discovery = &profiles.Discovery{View: g.viewFor, Profile: func(name string) (config.Profile, bool) { return g.now().cfg.ProfileNamed(name) }, Default: func() string { return g.now().cfg.Profile }, Principal: opts.Principal, Log: g.log, Sources: g.sources}
	g.discovery.Dense = profiles.DenseFor(opts.Config.Search, &vault.Resolver{Vault: opts.Vault, Masks: g.masks}, opts.Store.Embeddings(), g.log)
	kept := resultcut.New(opts.Store.Results(), g.discovery, opts.Config.Results, g.log) // results over their call's token budget
	g.opts.Tools = append(slices.Clip(g.opts.Tools), kept.Builtin())
	l, err := g.reloader.newLive(ctx, opts.Config, nil)
	if err != nil {
		return nil, err
	}
	g.live.Store(l)
	g.inbox = policy.NewInbox(opts.Store.Approvals(), opts.Config.Approvals)
	if g.auth, err = auth.NewAuthenticator(opts.Config.Auth, opts.Store.Tokens(), g.log); err != nil {
		l.instances.Close(nil)
		return nil, err
	}
	if _, err = oauth.Setup(ctx, opts.Config.Auth, opts.Store, opts.Vault, g.auth, g.log); err != nil {
		g.auth.Close()
		l.instances.Close(nil)
		return nil, err
	}
	g.audit = audit.NewWriter(opts.Store.Audit(), g.log)
	g.quarantines = audit.NewQuarantines(g.audit, opts.Store.Audit(), g.log)
	g.metrics = audit.NewMetrics(scrapeSources{g})
	g.metrics.Register(g.audit, instances.Circuits(g.Natives))
	g.hooks = hooks.New(hooks.Options{Events: opts.Store.Events(), Instance: func(id string) (hooks.Instance, bool) { return g.now().instances.Hook(id) }, View: g.viewFor, Register: g.metrics.Register, StateDir: opts.StateDir, Log: g.log, Server: g.MCPServer})
	g.decisions = &operations.Approvals{Inbox: g.inbox, Audit: g.audit.Add, Decided: g.metrics.Decided}
	g.views = profiles.NewViews(opts.Config.ViewCacheSize, g.buildView, g.metrics.ViewCacheHits.Inc, g.metrics.ViewCacheEvictions.Inc)
	// A decision made in the client (a confirmation, a task's cancel), recorded as every one is.
	decide := func(ctx context.Context, id string, approve bool, decider, tenant, reason string) error {
		_, err := g.decisions.Decide(ctx, admin.Decision{ID: id, Approve: approve, Decider: decider, Tenant: tenant, Reason: reason})
		return err
	}
	g.approvals = policy.NewExecutor(g.inbox, policy.ExecutorOptions{Log: g.log, Metrics: g.metrics, Catalog: g.Catalog, Refused: g.auditRefused, NoteReplay: noteReplay,
		PanelURL: waitnote.PanelURL(cmp.Or(opts.PanelAddr, opts.Config.Panel.Listen)), Run: executorCalls{g}.run, Notify: executorCalls{g}.notify, Decide: decide})

	if err := g.newUpstreams(ctx); err != nil {
		g.auth.Close()
		l.instances.Close(nil)
		return nil, err
	}
	g.cold = &coldstart.Wait{Ups: g.upstreams, Max: time.Duration(opts.Config.ColdStartWait)}
	g.fast = &fastPath{gw: g, sessions: fastpath.NewSessions(g.sessionIdle())}
	g.sealer = rounds.NewSealer(stateTTL)
	var serverInfo []byte
	g.instructions = profiles.Instructions(profiles.Sources(g.now().cfg, g.Instances(), &vault.Resolver{Vault: opts.Vault, Masks: g.masks}, g.upstreams, nil))
	g.mcp, serverInfo = sdkserver.New(sdkGateway{g}, sdkserver.Options{Version: opts.Version, Logger: g.log, Initialized: g.fast.sessions.Track, Results: kept, Own: g.hooks,
		Instructions: g.instructions,
		Proxy:        proxy.New(g.upstreams, g.log, func() catalog.Naming { return g.Catalog().Naming() }, g.sealer, g.discovery.Shows, g.discovery.AppsAllowed), Upstreams: len(g.upstreams.IDs()) > 0})
	g.fast.paths = fastpath.New(g.fast, g.fast.sessions, g.metrics, serverInfo)
	g.tasks = tasks.New(opts.Store.Approvals(), tasks.Options{Key: func(ctx context.Context) []byte { return g.kit.Derive(ctx, "tasks") }, Principal: opts.Principal, Decide: decide,
		SeparateApprover: opts.Config.Approvals.SeparateApprover,
		Result:           func(stored json.RawMessage) json.RawMessage { return toolresult.MarkStateless(stored, serverInfo) },
		Upstreams:        g.upstreams, Record: g.audit.Add, Present: func(up, tool string, res json.RawMessage) json.RawMessage {
			return toolresult.MarkRaw(g.masks.Secrets().Mask(res, false), provenance.New("mcp."+up, tool), g.now().cfg.Results.Spotlight)
		}})
	g.fast.paths.Declines = kept.Declines // the SDK's path cuts results to a budget
	g.fast.sessions.Attach(g.mcp)
	cat, err := g.buildCatalog()
	if err != nil {
		g.upstreams.Close()
		g.auth.Close()
		l.instances.Close(nil)
		return nil, err
	}
	g.setCatalog(cat, false)
	if g.tracer, err = telemetry.New(ctx, opts.Config.Telemetry, opts.Version); err != nil {
		g.Close()
		return nil, err
	}
	g.call = callPath(g)
	g.ready.Store(true)
	return g, nil
}

// buildCatalog lists the built-in tools and every instance's tools.
func (g *Gateway) buildCatalog() (*catalog.Catalog, error) {
	entries := []*catalog.Entry{}
	for _, b := range append(connectors.Builtins(), g.opts.Tools...) {
		entries = append(entries, instances.Entry(b.Canonical(), "the built-in "+b.Canonical()+" tool", "", &instances.Tool{Tool: b.Tool}))
	}
	entries = append(entries,
		instances.Entry(profiles.ApprovalTool, "the built-in approval inbox", "", &instances.Tool{Tool: g.approvals.StatusTool()}),
		instances.Entry(profiles.SearchTool, "the built-in tool search", "", &instances.Tool{Tool: g.discovery.Tool()}))
	entries = append(entries, g.now().instances.Entries(instances.HookTools(g.hooks))...)
	for _, t := range g.upstreams.Tools() {
		u, _ := g.upstreams.Upstream(t.Upstream)
		def, appOnly, keep := mcpapps.Tool(t.Upstream, t.Def, u.Config().AllowMCPUI)
		if !keep {
			continue // an app's tool of an upstream whose apps are off
		}
		entries = append(entries, &catalog.Entry{
			Canonical: t.Canonical(),
			Source:    fmt.Sprintf("upstream %q (%s)", t.Upstream, u.Origin()),
			Tenant:    u.Config().Tenant,
			Class:     t.Class,
			Hash:      t.Hash,
			Tool:      def,
			Target:    t,
			AppOnly:   appOnly,
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
	App            bool // the client negotiated MCP Apps: its call may be an app's, which alone may call an app-only tool

	round      *rounds.Round // a 2026-07-28 client's round (roundsStep)
	stateToken string
}

// Call runs one call by wire or canonical name through the call path. A
// tool failure is an isError result; the error is only for an unknown tool
// (ErrUnknownTool) or a protocol error to relay (*jsonrpc.Error).
func (g *Gateway) Call(ctx context.Context, name string, args json.RawMessage, o CallOptions) (*mcp.CallToolResult, error) {
	e, ok := g.viewFor(o.Principal).Lookup(name)
	if !ok && o.App {
		e, ok = mcpapps.Resolve(g.viewFor(o.Principal), name) // an app's call, by its server's own name
	}
	if !ok {
		c := g.callerOf(o)
		row := store.AuditRow{Principal: c.Principal, Tenant: c.Tenant, Session: c.Session, Tool: name}
		naming := g.Catalog().Naming()
		if t, err := cache.Refused(g.upstreams.Quarantine(), name, func(c string) string { return catalog.WireName(c, naming) }); err != nil {
			row.Tool, row.Source, row.Class = t.Canonical(), "upstream:"+t.Upstream, string(t.Class)
			row.Decision, row.Outcome = "quarantined", string(legate.CodePolicyDenied)
			g.auditRefused(row)
			return toolresult.Error(err), nil
		}
		row.Source, row.Outcome = sourceUnknown, outcomeUnknownTool
		g.auditRefused(row)
		return nil, fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	if e.AppOnly && !o.App {
		c := g.callerOf(o)
		g.auditRefused(store.AuditRow{Principal: c.Principal, Tenant: c.Tenant, Session: c.Session, Tool: e.Canonical,
			Source: "upstream:" + e.SourceID(), Class: string(e.Class), Decision: "app_only", Outcome: string(legate.CodePermissionDenied)})
		return toolresult.Error(&legate.Error{Code: legate.CodePermissionDenied, Message: fmt.Sprintf(
			"%s is an MCP App's tool (its visibility is app only): only an app may call it, through a client that negotiated %s", e.Canonical, mcpapps.Extension)}), nil
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
	r := &Request{Entry: e, Args: args, Caller: g.callerOf(o), Class: instances.ClassOf(e, args), Start: time.Now(), Session: o.Session,
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
	if rpcErr := toolresult.ProtocolError(err); rpcErr != nil {
		return nil, rpcErr
	}
	if err != nil {
		return decoded(toolresult.ErrorFor(r.Entry.Tool, err)), nil
	}
	return res, nil
}

// ErrorMetaKey holds a gateway error's details in every error result's
// _meta, the one place they are for every tool.
const ErrorMetaKey = legate.ErrorMetaKey

// Natives are the connector instances built now, with their health.
func (g *Gateway) Natives() instances.Set { return g.now().instances }

// Start begins the background work: connecting upstreams and refreshing
// their tool caches, writing audit rows, and running approved requests
// (policy.Executor.RunApproved). Call it for a serving gateway; one made for a single
// CLI command needs only StartAudit.
func (g *Gateway) Start(ctx context.Context) {
	ctx = g.startAudit(ctx, time.Duration(g.opts.Config.Audit.Retention)) // its default applied when the config was loaded
	g.quarantines.Start()
	g.discovery.Dense.Start(ctx, g.metrics.Register) // embeds the catalog's tools, and each new catalog's (search.embeddings_url)
	g.upstreams.Start(ctx)
	g.cold.Start()
	g.background.Go(func() { g.approvals.RunApproved(ctx) })
	g.background.Go(func() { g.inbox.Follow(ctx) }) // wake waiting calls on other replicas' decisions
	interval := cmp.Or(g.opts.StoreWatchInterval, DefaultStoreWatchInterval)
	g.background.Go(func() { g.reloader.watchStore(ctx, interval) })
	g.background.Go(func() { g.kit.Prune(ctx) })
	g.background.Go(func() {
		store.PruneEvery(ctx, g.log, "budget counts", config.MaxBudgetWindow, g.opts.Store.Quotas().Prune)
	})
	g.background.Go(func() { g.hooks.Run(ctx) })
	g.background.Go(func() {
		store.PruneEvery(ctx, g.log, "agent runs", time.Duration(g.opts.Config.Agent.Retention), g.opts.Store.AgentRuns().Prune)
	})
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
	g.approvals.Close()
	g.auth.Close()
	g.upstreams.Close()
	if g.stop != nil {
		g.stop()
	}
	g.background.Wait()
	g.tracer.Shutdown(context.Background()) // sends the last spans
	return g.now().instances.Close(nil)
}

// ConnectionsOf returns the per-user connections of g's instances (the
// CLI's connect commands).
func ConnectionsOf(g *Gateway) *connections.Manager { return g.connections }

// Instances returns the definitions of the built connector instances.
func (g *Gateway) Instances() []sources.InstanceDef { return g.now().instances.Defs() }
