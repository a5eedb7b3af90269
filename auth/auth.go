package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/store"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

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
	local       LocalIssuer      // nil: no access tokens of Legate's own
	cfg         config.Auth
	metadataURL string
	metadataFor string                             // the metadata URL of a profile's URL, less the profile
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
	a := &Authenticator{enabled: cfg.Enabled(), log: log, cfg: cfg}
	if cfg.TokensEnabled() {
		if tokens == nil {
			return nil, errors.New("auth: static tokens are on but there is no token store")
		}
		a.tokens = tokens
	}
	if cfg.Resource != "" {
		u, _ := url.Parse(cfg.Resource) // checked by Validate
		a.metadataURL = u.Scheme + "://" + u.Host + MetadataPath
		a.metadataFor = a.metadataURL + strings.TrimSuffix(u.Path, "/") + "/"
		a.metadata = &oauthex.ProtectedResourceMetadata{
			Resource:               cfg.Resource,
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "Legate",
		}
	}
	if o := cfg.OAuth; o != nil {
		a.oauth = newJWTVerifier(o, log)
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

// Close stops fetching the issuer's keys: a fetch in flight is cancelled
// and waited for. Verifying after Close uses the keys already fetched.
func (a *Authenticator) Close() {
	if a.oauth != nil {
		a.oauth.keys.close()
	}
}

// MetadataURL is the URL of the protected resource metadata, named in the
// WWW-Authenticate header of every 401; "" without auth.resource.
func (a *Authenticator) MetadataURL() string { return a.metadataURL }

// invalidToken is a refusal: the SDK answers 401 with the message, so it never
// holds the token.
func invalidToken(reason string) error { return fmt.Errorf("%w: %s", sdkauth.ErrInvalidToken, reason) }

// Verify checks a bearer token; it is an sdkauth.TokenVerifier. A token with
// TokenPrefix is a static token, found by its hash (so the lookup's timing
// says nothing about the token); any other is verified as a JWT access
// token. The TokenInfo's UserID is the identity HTTP sessions are bound to
// (sessionOwner), Extra[PrincipalKey] the *Principal. Refusals wrap
// sdkauth.ErrInvalidToken; other errors are failures to check (the store or
// the issuer's keys unavailable).
func (a *Authenticator) Verify(ctx context.Context, token string, req *http.Request) (*sdkauth.TokenInfo, error) {
	switch {
	case strings.HasPrefix(token, TokenPrefix):
		if a.tokens == nil {
			return nil, invalidToken("static tokens are not accepted")
		}
		return a.verifyStatic(ctx, token)
	case a.local != nil && (a.oauth == nil || jwtIssuerOf(token) == a.local.Issuer()):
		return a.verifyLocal(ctx, token, a.audiences(req))
	case a.oauth != nil:
		return a.oauth.verify(ctx, token, a.audiences(req))
	}
	return nil, invalidToken("unknown token")
}

// Middleware requires a valid bearer token (sdkauth.RequireBearerToken with
// Verify): without one the answer is 401 with `WWW-Authenticate: Bearer`
// naming the metadata URL, and error="invalid_token" when a token was sent
// but refused (RFC 6750); with one, the request's context holds its
// sdkauth.TokenInfo (PrincipalFromContext).
func (a *Authenticator) Middleware() func(http.Handler) http.Handler {
	// The SDK's challenge names no error, so the writer sets the whole
	// challenge on a 401. It is taken off again before next runs, so next
	// gets the server's own (flushable) writer.
	require := sdkauth.RequireBearerToken(a.Verify, &sdkauth.RequireBearerTokenOptions{ClockSkew: tokenClockSkew})
	return func(next http.Handler) http.Handler {
		inner := require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if cw, ok := w.(*challengeWriter); ok {
				w = cw.ResponseWriter
			}
			next.ServeHTTP(w, r)
		}))
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inner.ServeHTTP(&challengeWriter{ResponseWriter: w, challenge: a.challengeAt(r.PathValue("profile"), hasBearer(r)), hint: a.hint()}, r)
		})
	}
}

// challenge is the WWW-Authenticate value of a 401: Bearer, the metadata
// URL if any, and error="invalid_token" when the request's token was refused
// (RFC 6750 §3.1: none when it carried no token). Without auth.resource no
// metadata is served, so the challenge names the realm instead, and a
// refusal says why in error_description.
func (a *Authenticator) challenge(refused bool) string { return a.challengeAt("", refused) }

// challengeAt is the challenge of a 401 at the URL of profile ("" for
// /mcp): its metadata is that URL's (ProfileMetadataHandler).
func (a *Authenticator) challengeAt(profile string, refused bool) string {
	if a.metadataURL == "" {
		params := []string{`realm="legate"`}
		if refused {
			params = append(params, `error="invalid_token"`, `error_description="the token is unknown, expired or revoked"`)
		}
		return "Bearer " + strings.Join(params, ", ")
	}
	if profile != "" {
		return BearerChallenge(refused, fmt.Sprintf("resource_metadata=%q", a.metadataFor+url.PathEscape(profile)))
	}
	return BearerChallenge(refused, fmt.Sprintf("resource_metadata=%q", a.metadataURL))
}

// hint says, in the body of a 401, how to get a token that is accepted.
func (a *Authenticator) hint() string {
	var ways []string
	if a.tokens != nil {
		ways = append(ways, "create a token with `legate token create NAME` where Legate runs and send it as `Authorization: Bearer TOKEN`")
	}
	if a.oauth != nil || a.local != nil {
		ways = append(ways, "sign in with OAuth (an MCP client finds how through the resource_metadata URL of the WWW-Authenticate header)")
	}
	return strings.Join(ways, ", or ")
}

// BearerChallenge is a Bearer challenge with params, and with
// error="invalid_token" after them when refused.
func BearerChallenge(refused bool, params ...string) string {
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

// challengeWriter sets the challenge of a 401 and adds the hint to its
// message (the SDK's, such as "no bearer token", written at once).
type challengeWriter struct {
	http.ResponseWriter
	challenge, hint string
	refused         bool // a 401 is under way
}

func (c *challengeWriter) WriteHeader(code int) {
	if code == http.StatusUnauthorized {
		c.Header().Set("WWW-Authenticate", c.challenge)
		c.refused = true
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *challengeWriter) Write(b []byte) (int, error) {
	if !c.refused || c.hint == "" {
		return c.ResponseWriter.Write(b)
	}
	msg := strings.TrimRight(string(b), "\n") + ": " + c.hint + "\n"
	c.hint = ""
	if _, err := io.WriteString(c.ResponseWriter, msg); err != nil {
		return 0, err
	}
	return len(b), nil
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
	return sdkauth.ProtectedResourceMetadataHandler(a.metadata)
}

// One URL per toolset: /mcp/{profile} is a protected resource of its own,
// auth.resource followed by /{profile} (RFC 8707 names resources by URL),
// so a client pointed at it finds its metadata, asks for a token for it,
// and gets one whose audience names it. A token for auth.resource is
// accepted at every profile's URL too; one for a profile's URL only there.

// Resource is the resource identifier of the URL of profile ("" for /mcp
// itself), "" without auth.resource.
func (a *Authenticator) Resource(profile string) string {
	if a.metadata == nil || profile == "" {
		return a.cfg.Resource
	}
	return strings.TrimSuffix(a.cfg.Resource, "/") + "/" + url.PathEscape(profile)
}

// audiences are the audiences a token sent to req may name: auth.resource,
// and at a profile's URL that URL's resource.
func (a *Authenticator) audiences(req *http.Request) []string {
	out := []string{a.cfg.Resource}
	if req != nil && req.PathValue("profile") != "" {
		out = append(out, a.Resource(req.PathValue("profile")))
	}
	return out
}

// ProfileMetadataHandler serves the protected resource metadata of a
// profile's URL, {profile} in its path: MetadataHandler's, its resource
// that URL's; 404 without auth.resource. It answers for any name (of at
// most 64 bytes), known or not, so that no one learns from it which
// profiles exist: a name that is none is refused at its URL, once its
// caller is authenticated. Mount it at MetadataPath followed by
// /mcp/{profile}.
func (a *Authenticator) ProfileMetadataHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("profile")
		if a.metadata == nil || name == "" || len(name) > 64 {
			http.NotFound(w, r)
			return
		}
		m := *a.metadata
		m.Resource = a.Resource(name)
		sdkauth.ProtectedResourceMetadataHandler(&m).ServeHTTP(w, r)
	})
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

var _ sdkauth.TokenVerifier = (*Authenticator)(nil).Verify

// LocalIssuer verifies the access tokens of Legate's own authorization
// server (auth/oauth): a JWT whose iss is Issuer() goes to
// VerifyAccessToken, which returns its principal, expiry and scopes, or a
// refusal wrapping sdkauth.ErrInvalidToken.
type LocalIssuer interface {
	Issuer() string
	// A token must name one of resources (none: the issuer's own) in its
	// audience.
	VerifyAccessToken(ctx context.Context, token string, resources ...string) (*Principal, time.Time, []string, error)
	// Mount serves the issuer's endpoints on mux.
	Mount(mux *http.ServeMux)
}

// MountLocalIssuer serves the endpoints of the local issuer, if any, on
// mux: outside Middleware and the Host and Origin guard, like
// MetadataHandler.
func (a *Authenticator) MountLocalIssuer(mux *http.ServeMux) {
	if a.local != nil {
		a.local.Mount(mux)
	}
}

// credentialLocal is the kind of credential of an access token of
// Legate's own authorization server.
const credentialLocal = "oauth"

// SetLocalIssuer makes a accept the access tokens li issued and names
// li's issuer first among the authorization servers of the metadata. Call
// it before serving.
func (a *Authenticator) SetLocalIssuer(li LocalIssuer) {
	a.local = li
	if a.metadata != nil {
		a.metadata.AuthorizationServers = append([]string{li.Issuer()}, a.metadata.AuthorizationServers...)
		a.metadata.ScopesSupported = []string{"mcp"}
	}
}

func (a *Authenticator) verifyLocal(ctx context.Context, token string, resources []string) (*sdkauth.TokenInfo, error) {
	p, exp, scopes, err := a.local.VerifyAccessToken(ctx, token, resources...)
	if err != nil {
		return nil, err
	}
	return &sdkauth.TokenInfo{UserID: sessionOwner(credentialLocal, p), Expiration: exp, Scopes: scopes, Extra: map[string]any{PrincipalKey: p}}, nil
}

// jwtIssuerOf reads the iss claim of a compact JWT without verifying it:
// it only picks the verifier.
func jwtIssuerOf(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || len(token) > maxJWTSize {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Iss string `json:"iss"`
	}
	if json.Unmarshal(payload, &claims) != nil {
		return ""
	}
	return claims.Iss
}
