package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/auth/oauth/limits"
	"github.com/legate-mcp/legate/auth/oauth/redirecturi"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/vault"
)

// The paths the authorization server serves, below its issuer.
const (
	MetadataPath     = "/.well-known/oauth-authorization-server"
	OIDCMetadataPath = "/.well-known/openid-configuration"
	RegisterPath     = "/oauth/register"
	AuthorizePath    = "/oauth/authorize"
	CallbackPath     = AuthorizePath + "/callback"
	TokenPath        = "/oauth/token"
	RevokePath       = "/oauth/revoke"
	KeysPath         = "/oauth/keys"
	LoginPath        = "/oauth/login"
	ConsentPath      = "/oauth/consent"
)

// Server is Legate's OAuth 2.1 authorization server. The protocol
// (authorization code with PKCE, refresh tokens, revocation, signing) is
// zitadel/oidc's op package; Server keeps its state in Legate's store,
// registers clients (RFC 7591), logs people in with local accounts and
// asks their consent.
type Server struct {
	issuer     string // the origin of resource
	resource   string
	accessTTL  time.Duration
	refreshTTL time.Duration
	maxClients int
	unusedTTL  time.Duration

	store    store.OAuthStore
	users    store.UserStore
	key      *signingKey
	formKey  []byte // keys the forms' CSRF tokens
	provider *op.Provider
	guard    *limits.LoginGuard
	// The rates of registration, authorization requests and logins.
	registerLimit, authorizeLimit, loginLimit *limits.Limiter
	upstream                                  *upstreamLogin // nil without auth.oauth_server.upstream
	log                                       *slog.Logger
	now                                       func() time.Time
}

// Options are what New needs besides the configuration.
type Options struct {
	Store store.Store
	// Vault seals the signing key; nil keeps it in the store unsealed.
	Vault *vault.Vault
	Log   *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Issuer is the issuer of the authorization server for resource: its
// origin.
func Issuer(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// New builds the authorization server of the auth section cfg, whose
// oauth_server must be set; the signing key is read from the vault (or
// the store without one), made on first start.
func New(ctx context.Context, cfg config.Auth, o Options) (*Server, error) {
	sc := cfg.OAuthServer
	if sc == nil {
		return nil, errors.New("oauth: auth.oauth_server is not set")
	}
	if err := errors.Join(cfg.Validate("auth")...); err != nil {
		return nil, err
	}
	s := &Server{
		issuer: Issuer(cfg.Resource), resource: cfg.Resource,
		accessTTL: time.Duration(sc.AccessTokenTTL), refreshTTL: time.Duration(sc.RefreshTokenTTL),
		maxClients: sc.MaxClients, unusedTTL: time.Duration(sc.UnusedClientTTL),
		store: o.Store.OAuth(), users: o.Store.Users(), log: o.Log, now: o.Now, guard: limits.NewLoginGuard(),
		registerLimit: limits.New(limits.Register), authorizeLimit: limits.New(limits.Authorize), loginLimit: limits.New(limits.Login),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	// Zero values when the section was not given its defaults.
	s.accessTTL = orDefault(s.accessTTL, 10*time.Minute)
	s.refreshTTL = orDefault(s.refreshTTL, 720*time.Hour)
	s.unusedTTL = orDefault(s.unusedTTL, 24*time.Hour)
	if s.maxClients == 0 {
		s.maxClients = 1000
	}
	upstream, err := newUpstreamLogin(s.issuer, sc.Upstream)
	if err != nil {
		return nil, err
	}
	s.upstream = upstream
	key, err := loadKey(ctx, s.store, o.Vault, s.log)
	if err != nil {
		return nil, fmt.Errorf("oauth: the signing key: %w", err)
	}
	s.key, s.formKey = key, deriveFormKey(key)
	opts := []op.Option{
		op.WithCustomAuthEndpoint(op.NewEndpoint(strings.TrimPrefix(AuthorizePath, "/"))),
		op.WithCustomTokenEndpoint(op.NewEndpoint(strings.TrimPrefix(TokenPath, "/"))),
		op.WithCustomRevocationEndpoint(op.NewEndpoint(strings.TrimPrefix(RevokePath, "/"))),
		op.WithCustomKeysEndpoint(op.NewEndpoint(strings.TrimPrefix(KeysPath, "/"))),
		op.WithCustomIntrospectionEndpoint(op.NewEndpoint("oauth/introspect")),
		op.WithCustomUserinfoEndpoint(op.NewEndpoint("oauth/userinfo")),
		op.WithCustomEndSessionEndpoint(op.NewEndpoint("oauth/end_session")),
		op.WithLogger(s.log),
	}
	if strings.HasPrefix(s.issuer, "http://") {
		opts = append(opts, op.WithAllowInsecure()) // loopback only: checked by config
	}
	p, err := op.NewProvider(&op.Config{
		CodeMethodS256:        true,
		AuthMethodPost:        true,
		GrantTypeRefreshToken: true,
		SupportedScopes:       []string{ScopeMCP, oidc.ScopeOfflineAccess},
	}, &storage{srv: s}, op.StaticIssuer(s.issuer), opts...)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	s.provider = p
	return s, nil
}

// orDefault is d, or def when d is not positive.
func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// IssuerURL is the issuer identifier.
func (s *Server) IssuerURL() string { return s.issuer }

// Handler serves the authorization server's endpoints: mount it at each
// of Paths, outside the MCP endpoint's authentication and Origin check
// (browsers and clients of other origins reach it; the login forms check
// their own origin and CSRF token).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	inner := s.provider.HttpHandler()
	mux.HandleFunc("GET "+MetadataPath, s.metadata)
	mux.HandleFunc("GET "+OIDCMetadataPath, s.metadata)
	mux.Handle(RegisterPath, cors(http.HandlerFunc(s.register)))
	mux.Handle(AuthorizePath, s.checkResource(s.checkAuthorize(s.bindBrowser(inner)), false))
	mux.Handle("GET "+CallbackPath, s.callback(inner))
	mux.Handle(TokenPath, s.checkResource(inner, true))
	mux.Handle(RevokePath, inner)
	mux.Handle("GET "+KeysPath, inner)
	mux.HandleFunc("GET "+LoginPath, s.loginPage)
	mux.HandleFunc("POST "+LoginPath, s.login)
	mux.HandleFunc("POST "+ConsentPath, s.consent)
	if s.upstream != nil {
		mux.HandleFunc("GET "+UpstreamStartPath, s.upstreamStart)
		mux.HandleFunc("GET "+UpstreamCallbackPath, s.upstreamCallback)
	}
	return mux
}

// Paths are the paths Handler serves.
func Paths() []string {
	return []string{MetadataPath, OIDCMetadataPath, RegisterPath, AuthorizePath, CallbackPath, TokenPath, RevokePath, KeysPath, LoginPath, ConsentPath,
		UpstreamStartPath, UpstreamCallbackPath}
}

// checkResource refuses a resource parameter (RFC 8707) other than
// Legate's own or the URL of one of its profiles (ownResource) with
// invalid_target; the token of an authorization request is for the
// resources it names, else for Legate's own. An authorization request
// without a scope is given the mcp scope.
func (s *Server) checkResource(next http.Handler, token bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			oauthError(w, http.StatusBadRequest, "invalid_request", "the request's form cannot be read")
			return
		}
		for _, res := range r.Form["resource"] {
			if !s.ownResource(res) {
				oauthError(w, http.StatusBadRequest, "invalid_target", fmt.Sprintf("this server issues tokens only for the resource %s and its profiles' URLs below it", s.resource))
				return
			}
		}
		r = r.WithContext(context.WithValue(r.Context(), resourceKey{}, r.Form["resource"]))
		if !token && r.Form.Get("scope") == "" {
			q := r.URL.Query()
			q.Set("scope", ScopeMCP)
			r.URL.RawQuery = q.Encode()
			if r.Method == http.MethodGet {
				r.Form = nil // parsed again with the scope
			} else {
				r.Form.Set("scope", ScopeMCP)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// ownResource reports whether res is Legate's resource or the URL of a
// profile, one path segment below it (auth.Authenticator.Resource): which
// profiles exist, and which a caller may use, is checked at the URL.
func (s *Server) ownResource(res string) bool {
	seg, ok := strings.CutPrefix(res, strings.TrimSuffix(s.resource, "/")+"/")
	return res == s.resource || ok && seg != "" && !strings.ContainsAny(seg, "/?#")
}

type resourceKey struct{}

// checkAuthorize refuses, on an error page and never by a redirect, an
// authorization request whose client is unknown, whose redirect_uri is
// not one the client registered, or that lacks PKCE with S256 or asks
// for another response type than code: until all of these hold, the
// redirect_uri is only a claim, and redirecting an error to it would
// make Legate an open redirect (RFC 6749 §4.1.2.1). Past them, op
// redirects its own errors to the client.
func (s *Server) checkAuthorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := r.Form // parsed by checkResource
		if r.Method == http.MethodGet {
			f = r.URL.Query()
		}
		if msg := limits.CheckParams(f); msg != "" {
			errorPage(w, http.StatusBadRequest, msg)
			return
		}
		id, redirect := f.Get("client_id"), f.Get("redirect_uri")
		c, err := s.store.Client(r.Context(), id)
		switch {
		case id == "" || errors.Is(err, store.ErrNotFound):
			errorPage(w, http.StatusBadRequest, "The application is not registered here (client_id is missing or unknown).")
			return
		case err != nil:
			s.log.Error("reading a client", "err", err)
			errorPage(w, http.StatusInternalServerError, "The application could not be looked up.")
			return
		case redirect == "" || !redirecturi.Registered(c.RedirectURIs, redirect):
			errorPage(w, http.StatusBadRequest, "The application asked to send you to an address it did not register (redirect_uri).")
			return
		case f.Get("response_type") != string(oidc.ResponseTypeCode):
			errorPage(w, http.StatusBadRequest, "The application asked for a response other than an authorization code (response_type must be code).")
			return
		case f.Get("code_challenge") == "" || f.Get("code_challenge_method") != string(oidc.CodeChallengeMethodS256):
			errorPage(w, http.StatusBadRequest, "The application did not use PKCE: code_challenge with code_challenge_method S256 is required.")
			return
		}
		if wait := s.authorizeLimit.Allow(limits.Source(r), s.now()); wait > 0 {
			tooMany(w, wait, true)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bindBrowser binds the authorization request op makes to the browser
// asking: the browser is given its cookie, whose value op's
// CreateAuthRequest finds in the context.
func (s *Server) bindBrowser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := s.ensureBrowser(w, r)
		next.ServeHTTP(w, r.WithContext(withBrowser(r.Context(), v)))
	})
}

// callback issues the code of a consented authorization request, only to
// the browser that made it and only once (storage.SaveAuthCode makes the
// once hold between replicas too).
func (s *Server) callback(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, _, ok := s.pendingRequest(w, r, r.URL.Query().Get("id")); !ok {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// oauthError writes an OAuth error response (RFC 6749 §5.2).
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}

// tooMany writes 429 with Retry-After: an OAuth error for the endpoints
// clients call, the error page for the browser's.
func tooMany(w http.ResponseWriter, wait time.Duration, page bool) {
	secs := limits.RetryAfter(w, wait)
	if page {
		errorPage(w, http.StatusTooManyRequests, fmt.Sprintf("Too many requests from your address: try again in %d seconds.", secs))
		return
	}
	oauthError(w, http.StatusTooManyRequests, "too_many_requests", fmt.Sprintf("too many requests from this address: retry after %d seconds", secs))
}

// cors lets clients of any origin (browser-based MCP clients) call an
// endpoint that needs no cookie.
func cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" {
			w.Header().Set("Access-Control-Allow-Origin", "*")
			w.Header().Set("Access-Control-Allow-Headers", "Content-Type, Authorization")
			w.Header().Set("Access-Control-Allow-Methods", "POST, OPTIONS")
		}
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// metadata serves the RFC 8414 authorization server metadata (also at
// the OpenID discovery path, which some clients probe).
func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	m := map[string]any{
		"issuer":                                         s.issuer,
		"authorization_endpoint":                         s.issuer + AuthorizePath,
		"token_endpoint":                                 s.issuer + TokenPath,
		"registration_endpoint":                          s.issuer + RegisterPath,
		"revocation_endpoint":                            s.issuer + RevokePath,
		"jwks_uri":                                       s.issuer + KeysPath,
		"scopes_supported":                               []string{ScopeMCP, oidc.ScopeOfflineAccess},
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported":          []string{"none", "client_secret_basic", "client_secret_post"},
		"revocation_endpoint_auth_methods_supported":     []string{"none", "client_secret_basic", "client_secret_post"},
		"code_challenge_methods_supported":               []string{"S256"},
		"authorization_response_iss_parameter_supported": false,
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	json.NewEncoder(w).Encode(m)
}

// activeUser returns the user name names unless it is unknown or
// disabled.
func (s *Server) activeUser(ctx context.Context, name string) (store.User, error) {
	u, err := s.users.Get(ctx, name)
	if err != nil {
		return store.User{}, err
	}
	if u.Disabled {
		return store.User{}, fmt.Errorf("user %q is disabled", name)
	}
	return u, nil
}

// Issuer reports the issuer identifier; with VerifyAccessToken it makes
// Server an auth.LocalIssuer.
func (s *Server) Issuer() string { return s.issuer }

// VerifyAccessToken checks an access token this server issued: signed by
// its key, for one of resources (none: Legate's resource), unexpired, not
// revoked, its user neither gone nor disabled. It returns the user as a
// principal. Refusals wrap sdkauth.ErrInvalidToken.
func (s *Server) VerifyAccessToken(ctx context.Context, token string, resources ...string) (*auth.Principal, time.Time, []string, error) {
	refuse := func(reason string) (*auth.Principal, time.Time, []string, error) {
		return nil, time.Time{}, nil, fmt.Errorf("%w: %s", sdkauth.ErrInvalidToken, reason)
	}
	ctx = op.ContextWithIssuer(ctx, s.issuer)
	claims, err := op.VerifyAccessToken[*oidc.AccessTokenClaims](ctx, token, s.provider.AccessTokenVerifier(ctx))
	if err != nil {
		if errors.Is(err, oidc.ErrExpired) {
			return refuse("token expired")
		}
		return refuse("token not verified")
	}
	if len(resources) == 0 {
		resources = []string{s.resource}
	}
	if !slices.ContainsFunc(claims.Audience, func(a string) bool { return slices.Contains(resources, a) }) {
		return refuse("token not issued for this resource")
	}
	t, err := s.store.Token(ctx, claims.JWTID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return refuse("unknown token")
	case err != nil:
		return nil, time.Time{}, nil, errors.New("the token could not be checked")
	case t.Kind != store.OAuthAccess:
		return refuse("not an access token")
	case !t.RevokedAt.IsZero():
		return refuse("revoked token")
	case !s.now().Before(t.ExpiresAt):
		return refuse("token expired")
	}
	u, err := s.activeUser(ctx, t.Principal)
	if err != nil {
		return refuse("the token's user is unknown or disabled")
	}
	return &auth.Principal{Name: u.Name, Role: u.Role, Tenant: u.Tenant, Profile: u.Profile}, t.ExpiresAt, t.Scopes, nil
}

var _ auth.LocalIssuer = (*Server)(nil)

// Setup builds the authorization server when cfg.OAuthServer is set (nil
// otherwise) and has a accept its access tokens.
func Setup(ctx context.Context, cfg config.Auth, st store.Store, v *vault.Vault, a *auth.Authenticator, log *slog.Logger) (*Server, error) {
	if cfg.OAuthServer == nil {
		return nil, nil
	}
	s, err := New(ctx, cfg, Options{Store: st, Vault: v, Log: log.With("component", "oauth")})
	if err != nil {
		return nil, err
	}
	a.SetLocalIssuer(s)
	return s, nil
}

// Mount serves Handler at each of Paths on mux; a nil s mounts nothing.
// Mount it outside the MCP endpoint's Host and Origin guard, like the
// RFC 9728 metadata: clients and browsers of other origins reach it, and
// its forms check their own origin and CSRF token.
func (s *Server) Mount(mux *http.ServeMux) {
	if s == nil {
		return
	}
	h := s.Handler()
	for _, p := range Paths() {
		mux.Handle(p, h)
	}
}
