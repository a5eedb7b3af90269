package admin

import (
	"net/http"

	"github.com/legate-mcp/legate/auth"
)

// Harden lets through to h the admin API's reads, its approval
// decisions and the connection of the caller's own account (a consent
// started, or a token of their own stored),
// and its changes (connectors, upstreams, tokens, sessions) only as
// auth.Authenticator.RequirePinned does: on a hardened deployment, from a
// pinned principal. Deciding an approval or connecting one's own account
// (as GET /connect/INSTANCE does on the gateway) changes no part of the
// deployment, so approvers who are not pinned still do both.
func Harden(a *auth.Authenticator, h http.Handler) http.Handler {
	// Their own patterns, matched as the admin API matches them, so that
	// no other route passes for one.
	mux := http.NewServeMux()
	mux.Handle("POST /admin/v1/approvals/{id}/{verb}", h)
	mux.Handle("POST /admin/v1/connections/{instance}/connect", h)
	mux.Handle("PUT /admin/v1/connections/{instance}/token", h)
	mux.Handle("DELETE /admin/v1/connections/{instance}", ownRevokes(h, a.RequirePinned(h)))
	mux.Handle("/", a.RequirePinned(h))
	return mux
}
