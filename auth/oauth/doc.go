// Package oauth is Legate's own OAuth 2.1 authorization server for its
// /mcp endpoint (auth.oauth_server), so that a person adds Legate to an
// MCP client by its URL and logs in as themselves.
//
// The protocol is zitadel/oidc's op package: the authorization endpoint
// with PKCE (S256 only), the token endpoint (authorization code, refresh
// token), revocation (RFC 7009) and the signing key set. This package
// gives it its storage on Legate's store (clients, authorization
// requests, tokens by id and refresh tokens by hash), keeps its signing
// key sealed in the vault (one an earlier version kept in the store
// unsealed is moved there at start), and adds what op lacks:
//
//   - the RFC 8414 metadata at /.well-known/oauth-authorization-server
//     (and the OpenID discovery path clients also probe);
//   - dynamic client registration (RFC 7591), bounded by max_clients,
//     clients that never obtained a token deleted after unused_client_ttl;
//   - the RFC 8707 resource check: tokens are only for Legate's resource;
//   - refresh token rotation: a rotated token used again revokes its grant;
//   - the login and consent pages (html/template, embedded, no script),
//     taken only from the browser that made the authorization request (a
//     cookie whose hash the request keeps; the callback issues its one
//     code to that browser alone), each form carrying a CSRF token keyed
//     to that cookie, with local accounts whose passwords are argon2id
//     hashes;
//   - limits for callers nobody has authenticated (package limits):
//     parameter sizes, token buckets per source address and for all,
//     failed logins slowed down rather than accounts locked;
//   - the redirect URI rules of RFC 8252 (package redirecturi): https,
//     loopback http on any port, a private-use scheme in reverse-DNS form.
//
// The issuer is the origin of auth.resource. /mcp's authenticator takes
// the server's access tokens through auth.LocalIssuer:
//
//	s, err := oauth.Setup(ctx, cfg.Auth, st, vault, authenticator, log)
//	...
//	authenticator.MountLocalIssuer(mux) // outside the Host/Origin guard
package oauth
