package server

import (
	"context"
	"net/http"

	"github.com/legate-mcp/legate/auth/oauth"
)

// newOAuthServer builds Legate's own authorization server when
// auth.oauth_server is set, and has the authenticator accept its tokens.
func (g *Gateway) newOAuthServer(ctx context.Context) error {
	if g.opts.Config.Auth.OAuthServer == nil {
		return nil
	}
	s, err := oauth.New(ctx, g.opts.Config.Auth, oauth.Options{Store: g.opts.Store, Log: g.log.With("component", "oauth")})
	if err != nil {
		return err
	}
	g.oauth = s
	g.auth.SetLocalIssuer(s)
	return nil
}

// mountOAuth serves the authorization server's endpoints on root, outside
// the Host and Origin guard like the RFC 9728 metadata: clients and
// browsers of other origins reach them, and its forms check their own
// origin and CSRF token.
func (g *Gateway) mountOAuth(root *http.ServeMux) {
	if g.oauth == nil {
		return
	}
	h := g.oauth.Handler()
	for _, p := range oauth.Paths() {
		root.Handle(p, h)
	}
}
