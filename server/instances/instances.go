// Package instances builds the connector instances a configuration
// defines, and keeps them across reloads: an instance whose definition is
// unchanged (and whose connector does not say it is stale) is reused with
// its pools and clients; one a reload drops is closed once no call can
// still run on it. Its Tool is the catalog target of a native tool (an
// instance's or a built-in one), and Entry that tool's catalog entry.
package instances

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/vault"
)

// Instance is one built connector instance.
type Instance struct {
	Def   sources.InstanceDef
	Key   string // what it was built from (key)
	Conn  connectors.Connector
	Creds sources.Credentials
	// Health is its circuit breaker and last test, kept with Conn.
	Health *Health
}

// Options are what Build builds instances with.
type Options struct {
	// StateDir is the state directory they are built in.
	StateDir string
	// KB is the store their indexed documents are shared in, nil for none.
	KB store.KBStore
	// Resolver resolves their credentials.
	Resolver *vault.Resolver
	// Breaker configures each instance's circuit breaker.
	Breaker Breaker
}

// Set is the instances of one configuration.
type Set []*Instance

// Build builds the instances of defs as opts says, reusing each instance
// of old whose definition is unchanged (with its health). It does no
// I/O; every problem is reported, joined, and then what it built is
// closed.
func Build(defs []sources.InstanceDef, old Set, opts Options) (Set, error) {
	kept := map[string]*Instance{}
	for _, in := range old {
		kept[in.Key] = in
	}
	var out Set
	var errs []error
	for _, d := range defs {
		k := key(d)
		if in, ok := kept[k]; ok && !stale(in.Conn) {
			out = append(out, &Instance{Def: d, Key: k, Conn: in.Conn, Creds: in.Creds, Health: in.Health})
			continue
		}
		d.StateDir, d.KB = opts.StateDir, opts.KB
		c, err := d.Build()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, &Instance{Def: d, Key: k, Conn: c, Creds: sources.Credentials{Refs: d.Credentials, Resolver: opts.Resolver, Path: d.Path},
			Health: newHealth(d.ID, opts.Breaker, masksOf(opts.Resolver))})
	}
	if err := errors.Join(errs...); err != nil {
		out.Close(old)
		return nil, err
	}
	return out, nil
}

// masksOf are the secrets r learns, nil without r.
func masksOf(r *vault.Resolver) *vault.Masks {
	if r == nil {
		return nil
	}
	return r.Masks
}

// stale reports whether a connector says that the world outside its
// configuration it was built from changed (the host connector's skills),
// so that a reload builds it again.
func stale(c connectors.Connector) bool {
	s, ok := c.(interface{ Stale() bool })
	return ok && s.Stale()
}

// Stale reports whether an instance of s is stale.
func (s Set) Stale() bool {
	return slices.ContainsFunc(s, func(in *Instance) bool { return stale(in.Conn) })
}

// key identifies an instance's definition by what it builds from, not by
// where it is written (lines move in an edited file).
func key(d sources.InstanceDef) string {
	var node []byte
	if d.Config != nil {
		node, _ = yaml.Marshal(d.Config)
	}
	return fmt.Sprintf("%s\x00%s\x00%s\x00%v\x00%s", d.ID, d.Type, d.Tenant, d.Credentials, node)
}

// Close releases the instances of s that other does not share.
func (s Set) Close(other Set) error {
	var errs []error
	for _, c := range s.Only(other) {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// Only returns the instances of s that hold resources and that other
// (nil: none) does not share.
func (s Set) Only(other Set) []connectors.Closer {
	var out []connectors.Closer
	for _, in := range s {
		if slices.ContainsFunc(other, func(o *Instance) bool { return o.Key == in.Key }) {
			continue
		}
		if c, ok := in.Conn.(connectors.Closer); ok {
			out = append(out, c)
		}
	}
	return out
}

// Defs returns the definitions of the instances.
func (s Set) Defs() []sources.InstanceDef {
	out := make([]sources.InstanceDef, len(s))
	for i, in := range s {
		out[i] = in.Def
	}
	return out
}

// Test runs the connection test of the instances ids (none: every
// instance) and returns the results by id; each instance's Health keeps
// its outcome and what the test found (connectors.Facts).
func (s Set) Test(ctx context.Context, ids ...string) map[string]error {
	out := map[string]error{}
	for _, in := range s {
		if len(ids) > 0 && !slices.Contains(ids, in.Def.ID) {
			continue
		}
		var f connectors.Facts
		err := in.Conn.Test(connectors.WithFacts(ctx, &f), in.Creds)
		if in.Health != nil {
			in.Health.test(err, f)
		}
		out[in.Def.ID] = err
	}
	return out
}

// Find returns the instance id.
func (s Set) Find(id string) (*Instance, bool) {
	i := slices.IndexFunc(s, func(in *Instance) bool { return in.Def.ID == id })
	if i < 0 {
		return nil, false
	}
	return s[i], true
}

// Tool is the catalog target of a native tool: a tool of an instance, or
// a built-in one (Inst nil).
type Tool struct {
	Inst *Instance
	Tool connectors.Tool
	// local is a tool the gateway adds to the instance (HookTools), which
	// does not call the provider.
	local bool
}

// Run runs one call of t. A call to its instance's provider goes through
// the instance's circuit breaker: while the circuit is open it fails at
// once with UPSTREAM_UNAVAILABLE.
func (t *Tool) Run(ctx context.Context, call *connectors.Call) (*legate.Result, error) {
	if t.Inst == nil || t.Inst.Health == nil || t.local {
		return t.Tool.Run(ctx, call)
	}
	return t.Inst.Health.run(ctx, func() (*legate.Result, error) { return t.Tool.Run(ctx, call) })
}

// Entry is the catalog entry of native tool t by its canonical name,
// source (as the catalog names it in a collision) and tenant.
func Entry(canonical, source, tenant string, t *Tool) *catalog.Entry {
	def := &mcp.Tool{
		Name:        canonical,
		Description: t.Tool.Description,
		InputSchema: t.Tool.InputSchema,
		Annotations: catalog.Annotations(t.Tool.Class),
	}
	if t.Tool.OutputSchema != nil {
		def.OutputSchema = t.Tool.OutputSchema
	}
	return &catalog.Entry{Canonical: canonical, Source: source, Tenant: tenant, Class: t.Tool.Class, Hash: entryHash(def, t.Tool.Class), Tool: def, Target: t}
}

// Entries are the catalog entries of the instances' tools, and of the
// tools each of extra adds to an instance (HookTools); a disabled
// instance has none.
func (s Set) Entries(extra ...func(*Instance) []connectors.Tool) []*catalog.Entry {
	var out []*catalog.Entry
	for _, in := range s {
		if in.Def.Disabled {
			continue
		}
		tools := in.Conn.Tools()
		own := len(tools)
		for _, x := range extra {
			tools = append(slices.Clip(tools), x(in)...)
		}
		for i, t := range tools {
			e := Entry(in.Def.ID+"."+t.Name, fmt.Sprintf("connector %q (%s)", in.Def.ID, in.Def.Origin), in.Def.Tenant, &Tool{Inst: in, Tool: t, local: i >= own})
			e.Aliases = t.CanonicalAliases(in.Def.ID)
			out = append(out, e)
		}
	}
	return out
}

// entryHash is the definition hash of a native catalog entry: what an
// approval is bound to.
func entryHash(t *mcp.Tool, class legate.Class) string {
	b, _ := json.Marshal(struct {
		Tool  *mcp.Tool
		Class legate.Class
	}{t, class})
	return policy.ArgsHash(b)
}

// ClassOf is the class of one call to e: a native tool may class it from
// its arguments; an upstream tool's class is fixed in its catalog entry.
func ClassOf(e *catalog.Entry, args json.RawMessage) legate.Class {
	if nt, ok := e.Target.(*Tool); ok {
		return nt.Tool.ClassOf(args)
	}
	return e.Class
}
