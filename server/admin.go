package server

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/local"
	"github.com/legate-mcp/legate/operations"
	"github.com/legate-mcp/legate/panel"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/store"
)

// AdminHandler is g's admin API as /admin/ serves it, outside the Host and
// Origin guard: with authentication on, behind the authenticator and the
// approver role; else behind the admin token. On a hardened deployment
// (auth.hardened) its changes are closed to the principals of auth.pins
// (see admin.Harden). The panel calls it in process. listen is the address
// reported by the status.
func AdminHandler(g *Gateway, listen string) http.Handler {
	return adminHandler(g, listen, g.audit.Add)
}

// adminHandler is AdminHandler, its audit rows recorded by audit.
func adminHandler(g *Gateway, listen string, audit func(store.AuditRow)) http.Handler {
	h := adminAPI(g, listen, audit, g.auth.Enabled(), g.opts.AdminToken)
	if g.auth.Enabled() {
		return admin.JSONErrors(g.auth.Middleware()(g.auth.RequireRole(auth.RoleApprover, admin.Harden(g.auth, h))))
	}
	if g.opts.Config != nil && g.opts.Config.Auth.Hardened {
		// The admin token names no principal, and none it could be is
		// pinned: a hardened deployment without authentication takes no
		// change over the admin API.
		return admin.JSONErrors(admin.Harden(g.auth, h))
	}
	return h
}

// adminAPI is the admin API over g's parts (admin.Handler), before any authentication or hardening.
func adminAPI(g *Gateway, listen string, audit func(store.AuditRow), authenticated bool, token string) http.Handler {
	return admin.Handler(adminOps(g, listen, audit), &admin.Options{Authenticated: authenticated, Token: token, Logger: g.log, Connections: g.connections})
}

// adminOps are the admin operations over g's parts.
func adminOps(g *Gateway, listen string, audit func(store.AuditRow)) *operations.Ops {
	return operations.New(operations.Parts{
		Store: g.opts.Store, Vault: g.opts.Vault, Version: g.opts.Version, Listen: listen, Started: time.Now(), Principal: g.opts.Principal,
		Upstreams: g.upstreams, Catalog: g.Catalog, View: g.viewFor, Policy: func() *policy.Policy { return g.now().policy },
		Config: func() *config.File { return g.now().cfg }, Inbox: g.inbox, Decided: g.metrics.Decided, Audit: audit, Ready: g.ready.Load, Natives: g.Natives,
		Instances: g.Instances, Authenticated: g.auth.Enabled(),
		Sessions: g.fast.sessions.List, CloseSession: g.fast.sessions.Close, StateDir: g.opts.StateDir, Instructions: func() string { return g.instructions + sdkGateway{g}.Instructions() },
	})
}

// Operations are the operations over g's parts, their changes audited by
// audit: for a command working on a gateway of its own, no server running.
func Operations(g *Gateway, audit func(store.AuditRow)) *operations.Ops {
	return adminOps(g, "", audit)
}

// startPanel serves the web panel on its own address, panel.listen or
// Options.PanelAddr, until ctx ends; without one it does nothing. Logging
// in takes a token, so without authentication or an admin token it fails.
func startPanel(ctx context.Context, g *Gateway) (stop func(), err error) {
	addr := cmp.Or(g.opts.PanelAddr, g.opts.Config.Panel.Listen)
	if addr != "" && !g.auth.Enabled() && g.opts.AdminToken == "" {
		return nil, errors.New("the panel needs a token to log in with: set LEGATE_ADMIN_TOKEN or turn on auth")
	}
	limits := g.opts.Config.HTTP.WithDefaults() // the panel's listener is bounded as /mcp's is
	return panel.Start(ctx, addr, func(listen string) http.Handler { return adminHandler(g, listen, panel.Audit(g.audit.Add)) }, &panel.Options{
		AllowedHosts: g.opts.Config.AllowedHosts, Logger: g.log, Callback: g.connections.Finish, Listener: g.opts.PanelListener,
		ReadHeaderTimeout: time.Duration(limits.ReadHeaderTimeout), ReadTimeout: time.Duration(limits.ReadTimeout), IdleTimeout: time.Duration(limits.IdleTimeout),
	})
}

// LocalAdminHandler is g's admin API on the Unix socket of package local,
// which only the owner of the state directory can open: a request is the
// owner's, an admin named by its local.AsHeader (auth.OwnerOr), unless it
// bears a token with authentication on. On a hardened deployment the
// owner's changes are refused as an unpinned principal's are.
func LocalAdminHandler(g *Gateway, listen string) http.Handler {
	h := adminAPI(g, listen, g.audit.Add, true, "")
	if g.opts.Config != nil && g.opts.Config.Auth.Hardened {
		h = admin.Harden(g.auth, h)
	}
	return admin.JSONErrors(g.auth.OwnerOr(local.AsHeader, h))
}
