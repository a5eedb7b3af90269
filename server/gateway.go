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
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	httpconn "github.com/legate-mcp/legate/connectors/http"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/vault"
)

// Options configure a Gateway.
type Options struct {
	// Config is the loaded configuration; nil means none.
	Config *config.File
	// Store is the state store; nil keeps nothing (tests, `tools list`).
	Store store.Store
	// Logger receives logs; nil discards them.
	Logger *slog.Logger
	// Version is reported to clients as the server version.
	Version string
	// Principal is the caller of unauthenticated calls (default "local").
	Principal string
}

// Gateway is a running Legate: catalog, call path, MCP server.
type Gateway struct {
	opts      Options
	log       *slog.Logger
	cat       atomic.Pointer[catalog.Catalog]
	call      Handler
	mcp       *mcp.Server
	instances []*instance
	ready     atomic.Bool
}

// instance is one built connector instance.
type instance struct {
	def   InstanceDef
	conn  connectors.Connector
	creds credentialSet
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
		opts.Config = &config.File{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Principal == "" {
		opts.Principal = "local"
	}
	g := &Gateway{opts: opts, log: opts.Logger}

	defs, err := InstanceDefs(ctx, opts.Config, opts.Store)
	if err != nil {
		return nil, err
	}
	var errs []error
	resolver := &vault.Resolver{}
	for _, d := range defs {
		c, err := d.Build()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		g.instances = append(g.instances, &instance{def: d, conn: c, creds: credentialSet{refs: d.Credentials, resolver: resolver}})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	cat, err := g.buildCatalog()
	if err != nil {
		return nil, err
	}
	g.cat.Store(cat)

	timeout := time.Duration(opts.Config.CallTimeout)
	if timeout == 0 {
		timeout = DefaultCallTimeout
	}
	// The call path, outermost first:
	//  1. recoverPanics: a panicking tool becomes an error result;
	//  2. logCalls: one log line per failure, latency measured around all below;
	//  3. withTimeout: the per-call deadline;
	//  4. execute: the native connector or the upstream session.
	// Policy, approval and audit steps go between 2 and 3.
	g.call = chain(g.execute, recoverPanics(g.log), logCalls(g.log), withTimeout(timeout))
	g.mcp = g.newMCPServer()
	g.ready.Store(true)
	return g, nil
}

// buildCatalog lists the built-in tools and every instance's tools.
func (g *Gateway) buildCatalog() (*catalog.Catalog, error) {
	var entries []*catalog.Entry
	add := func(canonical, source string, nt *nativeTool) {
		t := nt.tool
		entries = append(entries, &catalog.Entry{
			Canonical: canonical,
			Source:    source,
			Class:     t.Class,
			Tool: &mcp.Tool{
				Name:        canonical,
				Description: t.Description,
				InputSchema: t.InputSchema,
				Annotations: annotationsFor(t.Class),
			},
			Target: nt,
		})
	}
	add("http.request", "the built-in http.request tool", &nativeTool{tool: httpconn.Builtin()})
	for _, in := range g.instances {
		for _, t := range in.conn.Tools() {
			add(in.def.ID+"."+t.Name, fmt.Sprintf("connector %q (%s)", in.def.ID, in.def.Origin), &nativeTool{inst: in, tool: t})
		}
	}
	naming := catalog.Safe
	if g.opts.Config.ToolNames == config.NamesCanonical {
		naming = catalog.Canonical
	}
	return catalog.Build(naming, entries)
}

// annotationsFor tells clients what a class means for their own UI.
func annotationsFor(c connectors.Class) *mcp.ToolAnnotations {
	f := false
	t := true
	switch c {
	case connectors.ClassRead:
		return &mcp.ToolAnnotations{ReadOnlyHint: true}
	case connectors.ClassDestructive:
		return &mcp.ToolAnnotations{DestructiveHint: &t}
	}
	return &mcp.ToolAnnotations{DestructiveHint: &f}
}

// Catalog returns the current catalog.
func (g *Gateway) Catalog() *catalog.Catalog { return g.cat.Load() }

// ErrUnknownTool is returned by Call for a name the catalog does not hold;
// the MCP server answers it with a JSON-RPC invalid-params error.
var ErrUnknownTool = errors.New("unknown tool")

// Call runs one call by wire or canonical name through the call path.
func (g *Gateway) Call(ctx context.Context, name string, args json.RawMessage, caller connectors.Caller) (*connectors.Result, error) {
	e, ok := g.Catalog().Lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	if caller.Principal == "" {
		caller.Principal = g.opts.Principal
	}
	nt := e.Target.(*nativeTool)
	r := &Request{
		Entry:       e,
		Args:        args,
		Caller:      caller,
		Class:       nt.tool.ClassOf(args),
		OperationID: uuid.NewString(),
		Start:       time.Now(),
	}
	return g.call(ctx, r)
}

// execute is the innermost handler: it runs the tool.
func (g *Gateway) execute(ctx context.Context, r *Request) (*connectors.Result, error) {
	nt := r.Entry.Target.(*nativeTool)
	call := &connectors.Call{
		Tool:        nt.tool.Name,
		Args:        r.Args,
		Caller:      r.Caller,
		OperationID: r.OperationID,
	}
	if nt.inst != nil {
		creds := nt.inst.creds
		creds.tenant = r.Caller.Tenant
		call.Credentials = creds
	} else {
		call.Credentials = credentialSet{}
	}
	return nt.tool.Run(ctx, call)
}

// Test runs every instance's connection test and returns the failures by id.
func (g *Gateway) Test(ctx context.Context, ids ...string) map[string]error {
	out := map[string]error{}
	for _, in := range g.instances {
		if len(ids) > 0 && !slices.Contains(ids, in.def.ID) {
			continue
		}
		out[in.def.ID] = in.conn.Test(ctx, in.creds)
	}
	return out
}

// Close releases the instances' resources.
func (g *Gateway) Close() error {
	var errs []error
	for _, in := range g.instances {
		if c, ok := in.conn.(connectors.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// Instances returns the definitions of the built connector instances.
func (g *Gateway) Instances() []InstanceDef {
	out := make([]InstanceDef, len(g.instances))
	for i, in := range g.instances {
		out[i] = in.def
	}
	return out
}
