// Package connections is per-user credentials for connector instances:
// each person connects their own account of a provider (Slack, GitHub,
// Notion, Google) through the instance's OAuth app, and a call to an
// instance whose credentials_mode is per_user (or per_user_or_shared)
// acts as the calling principal.
//
// A connection is the principal's tokens, kept in the vault as one
// secret per (tenant, principal, instance): its name is
// connections/INSTANCE/HASH, HASH naming the principal, in the principal's
// tenant. The value holds the access token, the refresh token, their
// expiry and the connection's status; listings show everything but the
// tokens. Each write replaces the secret (vault.Replace): no older version
// of the tokens stays behind a refresh.
//
// The connection flow is the OAuth 2.0 authorization code flow with PKCE
// (S256), run by Legate and bound to the browser that starts it (see
// browser.go). GET /connect/INSTANCE, for an authenticated principal, or
// a link [Manager.LinkURL] makes (its sealed ticket names the principal),
// shows a page that says who is being connected to what; its form, posted
// from that page, starts the consent ([Manager.Begin]): a cookie in that
// browser holds a nonce, and the browser goes to the provider's consent
// page with a state that binds the principal, the tenant, the instance and
// the nonce's hash, sealed (encrypted and authenticated) with a key rooted
// in the vault and expiring after StateTTL; the PKCE verifier travels
// inside it, so no replica keeps anything between the two legs. GET
// /connect/callback opens the state, checks the browser's cookie, claims
// the state (accepted once, Options.Claims), exchanges the code and stores
// the tokens. `legate connect INSTANCE` prints a link and waits for the
// connection to exist; the admin API starts a consent too (POST
// /admin/v1/connections/INSTANCE/connect), for the panel's Connect button,
// and lists what a principal may connect ([Manager.Connectable]). A
// consent may come back to any listener that serves the callback
// ([Manager.Finish]): the gateway's, or the panel's.
//
// At each call, [Manager.Credentials] resolves the instance's per-user
// credential for the calling principal alone: a token about to expire
// (within RefreshMargin) is refreshed first and the new tokens written
// back; a token the provider refuses is refreshed once when the connector
// reads the credential again. A refresh the provider refuses marks the
// connection expired: it then counts as not connected, the call fails
// with NOT_CONNECTED naming how to connect, and a profile's `all`
// selection leaves the instance out of that principal's set. Unless the
// profile sets auto_auth: false, such a call first asks its user to
// connect (see autoauth.go): through URL-mode elicitation, or an
// input_required result for a 2026-07-28 client. So does a call to an
// OAuth-protected upstream (auth: oauth) its caller has not connected.
package connections
