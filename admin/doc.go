// Package admin is the admin HTTP API under /admin/v1/: the approval inbox
// listed, read and decided by approvers; and for admins the connector
// types and instances, upstreams and their quarantined tools, the catalog
// and each agent's view of it, live sessions, the audit log and static
// tokens. openapi.json describes every route (served at
// /admin/v1/openapi.json; a test holds it and the routes to each other).
// Every change made through the API is audited with its principal.
//
// The API holds no state of its own: it runs the operations of an Ops
// (and of the optional StatusOps and ManageOps), which the gateway
// implements and hands in, so the API can be tested without the gateway;
// the panel (package panel) runs it in process:
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
