// Package auth is Legate's inbound authentication: who calls the gateway.
//
// An Authenticator verifies the bearer token of each HTTP request: a static
// token made by `legate token create` (TokenPrefix, stored by its hash) or,
// with auth.oauth, a JWT access token checked against the issuer's keys
// (JWKS, refreshed in the background and at once on an unknown key id).
// Either names a Principal: a name, a role (user, approver, admin), a
// tenant and a profile. Middleware puts it in the request's context:
//
//	a, err := auth.NewAuthenticator(cfg.Auth, st.Tokens(), log)
//	...
//	h = a.Middleware()(a.RequireRole(auth.RoleApprover, h))
//	// in h: p := auth.PrincipalFromContext(r.Context())
//
// The TokenInfo's UserID is the identity an HTTP session is bound to: the
// kind of credential, the tenant and the name, so a session answers only
// the credential that opened it. MetadataHandler serves the RFC 9728
// protected resource metadata that every 401 names.
package auth
