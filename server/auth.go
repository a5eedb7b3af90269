package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/store"
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
}

// HasRole reports whether p has role or one above it; a nil p has none.
func (p *Principal) HasRole(role string) bool {
	return p != nil && IsRole(role) && roleRank[p.Role] >= roleRank[role]
}

// PrincipalKey is the key of the *Principal in an auth.TokenInfo's Extra.
const PrincipalKey = "legate.principal"

// PrincipalFrom returns the principal a verified token names, or nil.
func PrincipalFrom(ti *auth.TokenInfo) *Principal {
	if ti == nil {
		return nil
	}
	p, _ := ti.Extra[PrincipalKey].(*Principal)
	return p
}

// PrincipalFromContext returns the principal of the request whose context
// ctx is (set by Authenticator.Middleware), or nil.
func PrincipalFromContext(ctx context.Context) *Principal {
	return PrincipalFrom(auth.TokenInfoFromContext(ctx))
}

// MetadataPath is where the RFC 9728 protected resource metadata is served,
// below the origin of auth.resource.
const MetadataPath = "/.well-known/oauth-protected-resource"

// tokenClockSkew is how far a token's exp and nbf may be off.
const tokenClockSkew = time.Minute

// staticTokenLifetime is the expiration reported for a static token: the
// MCP SDK requires one, and a static token lasts until revoked, which every
// request checks.
const staticTokenLifetime = 24 * time.Hour

// Authenticator verifies the bearer tokens of HTTP requests: static tokens
// made by `legate token create` and, with auth.oauth, JWT access tokens.
type Authenticator struct {
	enabled     bool
	tokens      store.TokenStore // nil: static tokens refused
	oauth       *jwtVerifier     // nil: access tokens refused
	metadataURL string
	metadata    *oauthex.ProtectedResourceMetadata // nil without auth.resource
	log         *slog.Logger
}

// NewAuthenticator builds the authenticator for the auth section cfg;
// tokens is where static tokens are looked up (may be nil when cfg turns
// them off). Nothing is fetched until a token needs the issuer's keys.
func NewAuthenticator(cfg config.Auth, tokens store.TokenStore, log *slog.Logger) (*Authenticator, error) {
	if err := errors.Join(cfg.Validate("auth")...); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &Authenticator{enabled: cfg.Enabled(), log: log}
	if cfg.TokensEnabled() {
		if tokens == nil {
			return nil, errors.New("auth: static tokens are on but there is no token store")
		}
		a.tokens = tokens
	}
	if cfg.Resource != "" {
		u, _ := url.Parse(cfg.Resource) // checked by Validate
		a.metadataURL = u.Scheme + "://" + u.Host + MetadataPath
		a.metadata = &oauthex.ProtectedResourceMetadata{
			Resource:               cfg.Resource,
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "Legate",
		}
	}
	if o := cfg.OAuth; o != nil {
		a.oauth = newJWTVerifier(cfg.Resource, o, log)
		a.metadata.AuthorizationServers = o.AuthorizationServers
		if len(o.AuthorizationServers) == 0 {
			a.metadata.AuthorizationServers = []string{o.Issuer}
		}
	}
	return a, nil
}

// Enabled reports whether the configuration turns authentication on. A
// disabled authenticator refuses every token: serve without its
// middleware, where CheckListen allows it.
func (a *Authenticator) Enabled() bool { return a.enabled }

// MetadataURL is the URL of the protected resource metadata, named in the
// WWW-Authenticate header of every 401; "" without auth.resource.
func (a *Authenticator) MetadataURL() string { return a.metadataURL }

// invalidToken is a refusal: the SDK answers 401 with the message, so it never
// holds the token.
func invalidToken(reason string) error { return fmt.Errorf("%w: %s", auth.ErrInvalidToken, reason) }

// Verify checks a bearer token; it is an auth.TokenVerifier. A token with
// TokenPrefix is a static token, found by its hash (so the lookup's timing
// says nothing about the token); any other is verified as a JWT access
// token. The TokenInfo's UserID is the identity HTTP sessions are bound to
// (sessionOwner), Extra[PrincipalKey] the *Principal. Refusals wrap
// auth.ErrInvalidToken; other errors are failures to check (the store or
// the issuer's keys unavailable).
func (a *Authenticator) Verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	switch {
	case strings.HasPrefix(token, TokenPrefix):
		if a.tokens == nil {
			return nil, invalidToken("static tokens are not accepted")
		}
		return a.verifyStatic(ctx, token)
	case a.oauth != nil:
		return a.oauth.verify(ctx, token)
	}
	return nil, invalidToken("unknown token")
}

func (a *Authenticator) verifyStatic(ctx context.Context, token string) (*auth.TokenInfo, error) {
	t, err := a.tokens.ByHash(ctx, HashToken(token))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, invalidToken("unknown token")
	case err != nil:
		a.log.Error("looking up a static token", "err", err)
		return nil, errors.New("the token could not be checked")
	case !t.RevokedAt.IsZero():
		return nil, invalidToken("revoked token")
	case !IsRole(t.Role):
		return nil, invalidToken("the token's role is unknown")
	}
	p := &Principal{Name: t.Name, Role: t.Role, Tenant: t.Tenant, Profile: t.Profile}
	return &auth.TokenInfo{UserID: sessionOwner(credentialToken, p), Expiration: time.Now().Add(staticTokenLifetime), Extra: map[string]any{PrincipalKey: p}}, nil
}

// The kinds of credential a principal authenticates with.
const (
	credentialToken = "token" // a static token
	credentialJWT   = "jwt"   // an OAuth access token
)

// sessionOwner is the identity an HTTP session is bound to (the SDK and the
// fast paths compare it on every request): the principal's name, its
// tenant and the kind of credential, since a JWT's subject and a static
// token's name are chosen by different parties and the same name in two
// tenants is two principals. Quoting keeps it unambiguous.
func sessionOwner(kind string, p *Principal) string {
	return fmt.Sprintf("%s %q %q", kind, p.Tenant, p.Name)
}

// Middleware requires a valid bearer token (auth.RequireBearerToken with
// Verify): without one the answer is 401 with `WWW-Authenticate: Bearer`
// naming the metadata URL, and error="invalid_token" when a token was sent
// but refused (RFC 6750); with one, the request's context holds its
// auth.TokenInfo (PrincipalFromContext).
func (a *Authenticator) Middleware() func(http.Handler) http.Handler {
	// The SDK's challenge names no error, so the writer sets the whole
	// challenge on a 401. It is taken off again before next runs, so next
	// gets the server's own (flushable) writer.
	require := auth.RequireBearerToken(a.Verify, &auth.RequireBearerTokenOptions{ClockSkew: tokenClockSkew})
	return func(next http.Handler) http.Handler {
		inner := require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if cw, ok := w.(*challengeWriter); ok {
				w = cw.ResponseWriter
			}
			next.ServeHTTP(w, r)
		}))
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inner.ServeHTTP(&challengeWriter{w, a.challenge(hasBearer(r))}, r)
		})
	}
}

// challenge is the WWW-Authenticate value of a 401: Bearer, the metadata
// URL if any, and error="invalid_token" when the request's token was refused
// (RFC 6750 §3.1: none when it carried no token).
func (a *Authenticator) challenge(refused bool) string {
	var params []string
	if a.metadataURL != "" {
		params = append(params, fmt.Sprintf("resource_metadata=%q", a.metadataURL))
	}
	return bearerChallenge(refused, params...)
}

// bearerChallenge is a Bearer challenge with params, and with
// error="invalid_token" after them when refused.
func bearerChallenge(refused bool, params ...string) string {
	if refused {
		params = append(params, `error="invalid_token"`)
	}
	if len(params) == 0 {
		return "Bearer"
	}
	return "Bearer " + strings.Join(params, ", ")
}

// hasBearer reports whether r carries a bearer token, read as the SDK reads it.
func hasBearer(r *http.Request) bool {
	f := strings.Fields(r.Header.Get("Authorization"))
	return len(f) == 2 && strings.EqualFold(f[0], "bearer")
}

// challengeWriter sets the challenge of a 401.
type challengeWriter struct {
	http.ResponseWriter
	challenge string
}

func (c *challengeWriter) WriteHeader(code int) {
	if code == http.StatusUnauthorized {
		c.Header().Set("WWW-Authenticate", c.challenge)
	}
	c.ResponseWriter.WriteHeader(code)
}

// MetadataHandler serves the RFC 9728 protected resource metadata
// (resource, authorization_servers, bearer_methods_supported) to GET, with
// CORS open to any origin as the document is public; 404 without
// auth.resource. Mount it at MetadataPath, outside Middleware and the
// Origin check.
func (a *Authenticator) MetadataHandler() http.Handler {
	if a.metadata == nil {
		return http.NotFoundHandler()
	}
	return auth.ProtectedResourceMetadataHandler(a.metadata)
}

// RequireRole lets through to next only requests whose principal has role
// or a higher one (admin may do what approver may, approver what user may):
// 403 for a lower role, 401 without a principal. It goes inside
// Middleware. An unknown role panics.
func (a *Authenticator) RequireRole(role string, next http.Handler) http.Handler {
	if !IsRole(role) {
		panic(fmt.Sprintf("server: RequireRole: unknown role %q", role))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := PrincipalFromContext(r.Context())
		switch {
		case p == nil:
			w.Header().Set("WWW-Authenticate", a.challenge(false))
			http.Error(w, "authentication required", http.StatusUnauthorized)
		case !p.HasRole(role):
			http.Error(w, fmt.Sprintf("forbidden: needs the %s role", role), http.StatusForbidden)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// CheckListen decides whether `legate serve` may listen on listen: a
// loopback address may go without authentication; any other address needs
// it, unless allowUnauthenticated, which returns a warning to log.
func CheckListen(listen string, authEnabled, allowUnauthenticated bool) (warning string, err error) {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("listen %q: want host:port", listen)
	}
	if authEnabled || isLoopbackName(host) {
		return "", nil
	}
	if allowUnauthenticated {
		return fmt.Sprintf("listening on %s without authentication (auth.allow_unauthenticated): anyone who can reach it can call every tool", listen), nil
	}
	return "", fmt.Errorf("refusing to listen on %s without authentication: turn on auth (auth.tokens: true with `legate token create`, or auth.oauth), listen on a loopback address, or set auth.allow_unauthenticated: true (serve --allow-unauthenticated)", listen)
}

// TokenPrefix begins every static token, telling it from a JWT.
const TokenPrefix = "lgt_"

// TokenNamePattern is what a static token's name (its principal) must match.
var TokenNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$`)

// HashToken returns the hex SHA-256 of a token, as stored.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CreateToken makes a static token for p (no role: RoleUser), stores its
// hash, and returns the token: the only time anyone sees it. A name in use,
// even by a revoked token, is an error wrapping store.ErrExists.
func CreateToken(ctx context.Context, tokens store.TokenStore, p Principal) (string, error) {
	if p.Role == "" {
		p.Role = RoleUser
	}
	switch {
	case !TokenNamePattern.MatchString(p.Name):
		return "", fmt.Errorf("token name %q must match %s", p.Name, TokenNamePattern)
	case !IsRole(p.Role):
		return "", fmt.Errorf("role %q: must be %s, %s or %s", p.Role, RoleUser, RoleApprover, RoleAdmin)
	}
	for _, f := range [][2]string{{"tenant", p.Tenant}, {"profile", p.Profile}} {
		if len(f[1]) > 128 || strings.IndexFunc(f[1], unicode.IsControl) >= 0 {
			return "", fmt.Errorf("%s %q: at most 128 characters, no control characters", f[0], f[1])
		}
	}
	b := make([]byte, 32)
	rand.Read(b) // never fails: crypto/rand crashes the program instead
	token := TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	err := tokens.Create(ctx, store.Token{Name: p.Name, Tenant: p.Tenant, Role: p.Role, Profile: p.Profile, Hash: HashToken(token), CreatedAt: time.Now()})
	if err != nil {
		return "", err
	}
	return token, nil
}

var _ auth.TokenVerifier = (*Authenticator)(nil).Verify
