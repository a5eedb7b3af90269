// Package admin is the admin HTTP API under /admin/v1/: the approval inbox
// listed, read and decided by approvers.
//
// The API holds no state of its own: it runs the operations of an Ops,
// which the gateway implements and hands in, so the API can be tested, and
// grown (connectors, upstreams, the panel), without the gateway:
//
//	h := admin.Handler(ops, &admin.Options{Token: os.Getenv("LEGATE_ADMIN_TOKEN")})
//	mux.Handle("/admin/", h)
//
// With authentication on, the handler goes behind the authenticator's
// middleware and role check; a principal below the admin role sees its
// own tenant only, and an admin's every access across tenants is audited.
// Without it, every request bears the admin token.
//
// Every error the API answers, an unknown route (404) and a method a route
// does not take (405, with Allow) included, has one shape, its code fixed
// by the HTTP status (see the Code constants):
//
//	{"error": {"code": "NOT_FOUND", "message": "approval \"ap_x\" not found"}}
//
// In front of the API, [JSONErrors] gives the authenticator's refusals
// the same shape. A [Client] returns it as an [*Error].
package admin
