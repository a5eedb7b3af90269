package auth

import (
	"cmp"
	"context"
	"net/http"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
)

// The roles, lowest first: each may do whatever the ones before it may.
const (
	RoleUser     = "user"
	RoleApprover = "approver"
	RoleAdmin    = "admin"
)

var roleRank = map[string]int{RoleUser: 1, RoleApprover: 2, RoleAdmin: 3}

// IsRole reports whether s is one of the roles.
func IsRole(s string) bool { return roleRank[s] > 0 }

// Principal is an authenticated caller.
type Principal struct {
	// Name is the static token's name or the access token's principal
	// claim; HTTP sessions are bound to it.
	Name string `json:"name"`
	// Role is RoleUser, RoleApprover or RoleAdmin.
	Role    string `json:"role"`
	Tenant  string `json:"tenant,omitempty"`
	Profile string `json:"profile,omitempty"`
	// Narrow is the profile the request's URL narrows the view of Profile
	// to ("" for none): the caller sees the tools of both.
	Narrow string `json:"narrow,omitempty"`
}

// Via is the profile whose view p sees: Narrow, else Profile; "" for a
// nil p.
func (p *Principal) Via() string {
	if p == nil {
		return ""
	}
	return cmp.Or(p.Narrow, p.Profile)
}

// HasRole reports whether p has role or one above it; a nil p has none.
func (p *Principal) HasRole(role string) bool {
	return p != nil && IsRole(role) && roleRank[p.Role] >= roleRank[role]
}

// PrincipalKey is the key of the *Principal in an sdkauth.TokenInfo's Extra.
const PrincipalKey = "legate.principal"

// PrincipalFrom returns the principal a verified token names, or nil.
func PrincipalFrom(ti *sdkauth.TokenInfo) *Principal {
	if ti == nil {
		return nil
	}
	p, _ := ti.Extra[PrincipalKey].(*Principal)
	return p
}

// PrincipalFromContext returns the principal of the request whose context
// ctx is (set by Authenticator.Middleware), or nil.
func PrincipalFromContext(ctx context.Context) *Principal {
	return PrincipalFrom(sdkauth.TokenInfoFromContext(ctx))
}

// ServeAs has next serve r with ti as its token info (TokenInfoFromContext),
// which the go-sdk sets only through its bearer-token middleware: r goes
// through one that takes ti as given, its Authorization header kept as it
// was.
func ServeAs(ti *sdkauth.TokenInfo, next http.Handler, w http.ResponseWriter, r *http.Request) {
	authz, had := r.Header["Authorization"]
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer given")
	given := func(context.Context, string, *http.Request) (*sdkauth.TokenInfo, error) { return ti, nil }
	sdkauth.RequireBearerToken(given, &sdkauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if had {
			r.Header["Authorization"] = authz
		} else {
			delete(r.Header, "Authorization")
		}
		next.ServeHTTP(w, r)
	})).ServeHTTP(w, r)
}
