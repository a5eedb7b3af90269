package auth

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"net/http"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
)

// OwnerOr serves next on a channel only the owner of the state directory
// can open (the admin socket of package local): a request bearing a token,
// with authentication on, is its principal's, as Middleware makes it; any
// other is the owner's, an admin named by the request's header nameHeader
// (default "cli").
func (a *Authenticator) OwnerOr(nameHeader string, next http.Handler) http.Handler {
	owner := rand.Text() // stands for the owner inside this process only
	verify := func(ctx context.Context, tok string, r *http.Request) (*sdkauth.TokenInfo, error) {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(owner)) == 1 {
			p := &Principal{Name: cmp.Or(r.Header.Get(nameHeader), "cli"), Role: RoleAdmin}
			return &sdkauth.TokenInfo{Expiration: time.Now().Add(time.Minute), Extra: map[string]any{PrincipalKey: p}}, nil
		}
		return a.Verify(ctx, tok, r)
	}
	inner := sdkauth.RequireBearerToken(verify, nil)(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" || !a.Enabled() {
			r.Header.Set("Authorization", "Bearer "+owner)
		}
		inner.ServeHTTP(w, r)
	})
}
