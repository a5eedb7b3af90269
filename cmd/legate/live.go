package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/cmd/legate/internal/access"
	"github.com/legate-mcp/legate/cmd/legate/internal/approvalscmd"
	"github.com/legate-mcp/legate/cmd/legate/internal/upstreamcmd"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/local"
	"github.com/legate-mcp/legate/operations"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/upstream"
)

// ownState marks, in a command's Annotations, a server command that keeps
// to its own state directory rather than follow a running server's.
const ownState = "legate.own-state"

// liveServer is the admin API of the server running on the command's state
// directory, reached over its socket, acting as local.Caller(as); nil when
// none runs there. A command that changes or reads live state goes through
// it, so that the server audits the change and acts on it at once.
func (g *globals) liveServer(as string) (*admin.Client, *local.Record, error) {
	l, err := g.locate()
	if err != nil || l.Server == nil {
		return nil, nil, err
	}
	return local.Client(l.Server, as), l.Server, nil
}

// approvalsHooks lend `legate approvals` the env and the running server.
func approvalsHooks(g *globals) approvalscmd.Hooks {
	return approvalscmd.Hooks{
		WithEnv: func(run func(*cobra.Command, []string, approvalscmd.Env) error) func(*cobra.Command, []string) error {
			return g.withEnv(func(cmd *cobra.Command, argv []string, e *env) error {
				return run(cmd, argv, approvalscmd.Env{Config: e.cfg, Store: e.store, Decide: g.operations(e).Decide})
			})
		},
		Live:   g.live,
		Direct: g.direct,
	}
}

// live is liveServer with a function that says it was used.
func (g *globals) live(as string) (*admin.Client, func(), error) {
	c, rec, err := g.liveServer(as)
	return c, func() { g.through(rec) }, err
}

// upstreamHooks lend `legate upstream` the running server, the store's
// operations and a gateway.
func upstreamHooks(g *globals) upstreamcmd.Hooks {
	return upstreamcmd.Hooks{Live: g.live, Direct: g.direct, WithGateway: g.withGateway, WithOps: g.withOps, WithGatewayOps: g.withGatewayOps,
		Remove: g.remove, Caller: local.Caller(""), Failed: func(msg string) error { return exitError{msg} }}
}

// withOps makes a command body that runs with the operations over the
// command's store (g.operations).
func (g *globals) withOps(run func(*cobra.Command, []string, *operations.Ops) error) func(*cobra.Command, []string) error {
	return g.withEnv(func(cmd *cobra.Command, argv []string, e *env) error { return run(cmd, argv, g.operations(e)) })
}

// operations are the operations over e's store, for a command that runs
// no server (operations.Standalone); an audit row they cannot write is
// said on stderr.
func (g *globals) operations(e *env) *operations.Ops {
	connect := func(ctx context.Context) (*upstream.Manager, func(), error) {
		gw, err := e.gateway(ctx)
		if err != nil {
			return nil, nil, err
		}
		return gw.Upstreams(), func() { gw.Close() }, nil
	}
	p := operations.Parts{Store: e.store, Vault: e.vault, Config: func() *config.File { return e.cfg }, Connect: connect, Principal: local.Caller("")}
	return operations.Standalone(p, func(err error) {
		fmt.Fprintf(g.stderr, "legate: warning: the audit row of this change was not written: %v\n", err)
	})
}

// through says, on stderr, that the command acted through the running
// server rec.
func (g *globals) through(rec *local.Record) {
	fmt.Fprintf(g.stderr, "legate: done through the running server (%s)\n", rec)
}

// direct says, on stderr and before a change, that the command uses the
// store itself because no server runs on its state directory.
func (g *globals) direct(verb string) {
	if l, err := g.locate(); err == nil {
		fmt.Fprintf(g.stderr, "legate: no server runs on the state directory %s (%s): %s its store directly\n", l.Place.Dir, l.Place.DirBy, verb)
	}
}

// changes are the commands besides access.Mutations that change state a
// running server acts on.
var changes = []string{"approvals approve", "approvals deny", "skills install", "skills enable", "skills disable", "skills rm",
	"upstream refresh", "upstream test", "upstream accept", "connector test"}

// warnElsewhere says, on stderr and before the command cmd changes
// anything, that servers run on other state directories than its own,
// which will not see the change, and how to reach theirs.
func (g *globals) warnElsewhere(cmd *cobra.Command) error {
	path := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	if !slices.Contains(access.Mutations, path) && !slices.Contains(changes, path) {
		return nil
	}
	l, err := g.locate()
	if err != nil || l.Server != nil {
		return err
	}
	for _, o := range l.Others {
		hint := "--state-dir " + o.StateDir
		if o.Config != "" {
			hint = "--config " + o.Config
		}
		fmt.Fprintf(g.stderr, "legate: note: a server runs on another state directory (%s); it will not see this: to act on its state, pass %s\n", o, hint)
	}
	return nil
}

// announce makes the server serving gw on listen findable by the legate
// command (package local); a second server on the same state directory
// is served, but not announced.
func announce(ctx context.Context, e *env, gw *server.Gateway, listen string) func() {
	rec := local.NewRecord(listen, e.cfg.Path, e.stateDir, e.storeURL, version)
	stop, err := local.Announce(rec, server.LocalAdminHandler(gw, listen))
	if err != nil {
		e.log.Warn("legate commands cannot reach this server", "error", err)
		return func() {}
	}
	context.AfterFunc(ctx, stop)
	return stop
}

// skillsDir is the skills library of the command's state directory, where
// the host connector of a server on it reads them.
func (g *globals) skillsDir(*cobra.Command) (string, error) {
	dir, err := g.resolveStateDir(nil)
	return filepath.Join(dir, "skills"), err
}

// withGatewayOps makes a command body that runs with the operations over
// a gateway built on the command's store, audited there as g.operations
// are, acting as the CLI's user.
func (g *globals) withGatewayOps(run func(*cobra.Command, []string, *operations.Ops) error) func(*cobra.Command, []string) error {
	return g.withEnv(func(cmd *cobra.Command, argv []string, e *env) error {
		gw, err := e.gateway(cmd.Context())
		if err != nil {
			return err
		}
		defer gw.Close()
		cmd.SetContext(admin.WithCaller(cmd.Context(), local.Caller(""), ""))
		return run(cmd, argv, server.Operations(gw, g.operations(e).Audit))
	})
}

// remove removes the stored kind ("connector" or "upstream") id through
// the running server, or without one from the store.
func (g *globals) remove(cmd *cobra.Command, kind, id string) error {
	live, rec, err := g.liveServer("")
	switch {
	case err != nil:
		return err
	case live != nil:
		if err = live.Remove(cmd.Context(), kind, id); err == nil {
			g.through(rec)
		}
	default:
		g.direct("removing from")
		err = g.withOps(func(cmd *cobra.Command, _ []string, ops *operations.Ops) error {
			if kind == "connector" {
				return ops.RemoveConnector(cmd.Context(), id)
			}
			return ops.RemoveUpstream(cmd.Context(), id)
		})(cmd, nil)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "removed %s %q\n", kind, id)
	return nil
}
