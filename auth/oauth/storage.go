package oauth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/legate-mcp/legate/store"
)

// requestLifetime bounds the time from the authorization request to the
// code's exchange: login, consent and the client's redirect.
const requestLifetime = 10 * time.Minute

// ScopeMCP is the one scope Legate grants: calling /mcp as the person
// who logged in, within their role, tenant and profile.
const ScopeMCP = "mcp"

// storage is op.Storage on Legate's store.
type storage struct {
	srv *Server
}

// authRequest is an authorization request as kept in the store.
type authRequest struct {
	ID            string                   `json:"id"`
	ClientID      string                   `json:"client_id"`
	RedirectURI   string                   `json:"redirect_uri"`
	State         string                   `json:"state,omitempty"`
	Nonce         string                   `json:"nonce,omitempty"`
	Scopes        []string                 `json:"scopes"`
	ResponseType  oidc.ResponseType        `json:"response_type"`
	ResponseMode  oidc.ResponseMode        `json:"response_mode,omitempty"`
	Challenge     string                   `json:"code_challenge"`
	ChallengeType oidc.CodeChallengeMethod `json:"code_challenge_method"`
	Audience      []string                 `json:"audience"`
	// Subject is the user who logged in, "" before.
	Subject  string    `json:"subject,omitempty"`
	AuthTime time.Time `json:"auth_time"`
	// Browser is the hash of the browser cookie of the browser that made
	// the request: every later step is taken only from that browser.
	Browser   string `json:"browser"`
	Consented bool   `json:"consented,omitempty"`
	// UpstreamState is the hash of the state sent to the upstream
	// provider, UpstreamVerifier the PKCE verifier of that login.
	UpstreamState    string `json:"upstream_state,omitempty"`
	UpstreamVerifier string `json:"upstream_verifier,omitempty"`

	// codeIssued: the request was given its code (and may have spent it).
	codeIssued bool
}

func (a *authRequest) GetID() string          { return a.ID }
func (a *authRequest) GetACR() string         { return "" }
func (a *authRequest) GetAMR() []string       { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string  { return a.Audience }
func (a *authRequest) GetAuthTime() time.Time { return a.AuthTime }
func (a *authRequest) GetClientID() string    { return a.ClientID }
func (a *authRequest) GetNonce() string       { return a.Nonce }
func (a *authRequest) GetRedirectURI() string { return a.RedirectURI }
func (a *authRequest) GetScopes() []string    { return a.Scopes }
func (a *authRequest) GetState() string       { return a.State }
func (a *authRequest) GetSubject() string     { return a.Subject }
func (a *authRequest) Done() bool             { return a.Consented && a.Subject != "" }
func (a *authRequest) GetResponseMode() oidc.ResponseMode {
	return a.ResponseMode
}
func (a *authRequest) GetResponseType() oidc.ResponseType {
	return a.ResponseType
}
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	return &oidc.CodeChallenge{Challenge: a.Challenge, Method: a.ChallengeType}
}

// refreshRequest is a refresh token presented to the token endpoint.
type refreshRequest struct {
	tok    store.OAuthToken
	scopes []string
}

func (r *refreshRequest) GetAMR() []string            { return []string{"pwd"} }
func (r *refreshRequest) GetAudience() []string       { return r.tok.Audience }
func (r *refreshRequest) GetAuthTime() time.Time      { return r.tok.AuthTime }
func (r *refreshRequest) GetClientID() string         { return r.tok.ClientID }
func (r *refreshRequest) GetScopes() []string         { return r.scopes }
func (r *refreshRequest) GetSubject() string          { return r.tok.Principal }
func (r *refreshRequest) SetCurrentScopes(s []string) { r.scopes = s }

// randomID is 32 random bytes, base64url.
func randomID() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashSecret is the hex SHA-256 of a code, token or secret, as stored.
func hashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func (s *storage) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	if req.CodeChallenge == "" || req.CodeChallengeMethod != oidc.CodeChallengeMethodS256 {
		return nil, oidc.ErrInvalidRequest().WithDescription("PKCE is required, with code_challenge_method S256")
	}
	if req.ResponseType != oidc.ResponseTypeCode {
		return nil, oidc.ErrUnauthorizedClient().WithDescription("only response_type code is supported")
	}
	browser := browserFrom(ctx)
	if browser == "" {
		return nil, oidc.ErrServerError().WithDescription("the authorization request is not bound to a browser")
	}
	scopes := []string{ScopeMCP, oidc.ScopeOfflineAccess}
	audience, _ := ctx.Value(resourceKey{}).([]string) // checked by checkResource
	if len(audience) == 0 {
		audience = []string{s.srv.resource}
	}
	a := &authRequest{Browser: hashSecret(browser),
		ID: randomID(), ClientID: req.ClientID, RedirectURI: req.RedirectURI, State: req.State, Nonce: req.Nonce,
		Scopes: scopes, ResponseType: req.ResponseType, ResponseMode: req.ResponseMode,
		Challenge: req.CodeChallenge, ChallengeType: req.CodeChallengeMethod, Audience: slices.Compact(slices.Sorted(slices.Values(audience))),
	}
	if err := s.putRequest(ctx, a); err != nil {
		return nil, err
	}
	// Each login sweeps what has expired, so the tables stay small.
	if _, err := s.srv.store.DeleteExpired(ctx, s.srv.now()); err != nil {
		s.srv.log.Error("deleting expired requests and tokens", "err", err)
	}
	return a, nil
}

// putRequest stores a's progress; its code, if it has one, is kept.
func (s *storage) putRequest(ctx context.Context, a *authRequest) error {
	data, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return s.srv.store.PutRequest(ctx, store.OAuthRequest{ID: a.ID, ClientID: a.ClientID, Data: data, ExpiresAt: s.srv.now().Add(requestLifetime)})
}

func decodeRequest(r store.OAuthRequest) (*authRequest, error) {
	var a authRequest
	if err := json.Unmarshal(r.Data, &a); err != nil {
		return nil, fmt.Errorf("authorization request %s: %w", r.ID, err)
	}
	a.codeIssued = r.CodeHash != ""
	return &a, nil
}

// request returns an unexpired authorization request.
func (s *storage) request(ctx context.Context, id string) (*authRequest, error) {
	r, err := s.srv.store.Request(ctx, id, s.srv.now())
	if err != nil {
		return nil, err
	}
	return decodeRequest(r)
}

func (s *storage) AuthRequestByID(ctx context.Context, id string) (op.AuthRequest, error) {
	a, err := s.request(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, oidc.ErrInvalidRequest().WithDescription("unknown or expired authorization request")
	}
	return a, err
}

func (s *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	r, err := s.srv.store.RequestByCode(ctx, hashSecret(code), s.srv.now())
	if errors.Is(err, store.ErrNotFound) {
		return nil, oidc.ErrInvalidGrant().WithDescription("the code is invalid, expired or used")
	}
	if err != nil {
		return nil, err
	}
	return decodeRequest(r)
}

// SaveAuthCode gives the request its one code: a second callback, even
// one racing the first on another replica, is refused.
func (s *storage) SaveAuthCode(ctx context.Context, id, code string) error {
	err := s.srv.store.IssueCode(ctx, id, hashSecret(code), s.srv.now())
	switch {
	case errors.Is(err, store.ErrConflict):
		return oidc.ErrInvalidRequestRedirectURI().WithDescription("this authorization was completed already: its code is issued once")
	case errors.Is(err, store.ErrNotFound):
		return oidc.ErrInvalidRequestRedirectURI().WithDescription("unknown or expired authorization request")
	}
	return err
}

func (s *storage) DeleteAuthRequest(ctx context.Context, id string) error {
	return s.srv.store.DeleteRequest(ctx, id)
}

// accessToken is the row of a new access token of a family.
func (s *storage) accessToken(req op.TokenRequest, family, clientID string, authTime time.Time) store.OAuthToken {
	now := s.srv.now()
	return store.OAuthToken{ID: randomID(), Kind: store.OAuthAccess, Family: family, ClientID: clientID, Principal: req.GetSubject(),
		Scopes: req.GetScopes(), Audience: req.GetAudience(), AuthTime: authTime, CreatedAt: now, ExpiresAt: now.Add(s.srv.accessTTL)}
}

func clientAndAuthTime(req op.TokenRequest) (string, time.Time) {
	switch r := req.(type) {
	case *authRequest:
		return r.ClientID, r.AuthTime
	case *refreshRequest:
		return r.tok.ClientID, r.tok.AuthTime
	}
	return "", time.Time{}
}

func (s *storage) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	clientID, authTime := clientAndAuthTime(req)
	family := randomID()
	if r, ok := req.(*refreshRequest); ok {
		family = r.tok.Family
	}
	at := s.accessToken(req, family, clientID, authTime)
	if err := s.srv.store.CreateToken(ctx, at); err != nil {
		return "", time.Time{}, err
	}
	return at.ID, at.ExpiresAt, nil
}

func (s *storage) CreateAccessAndRefreshTokens(ctx context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	clientID, authTime := clientAndAuthTime(req)
	now := s.srv.now()
	family := randomID()
	rr, isRefresh := req.(*refreshRequest)
	if isRefresh {
		family = rr.tok.Family
	}
	refresh := "lgr_" + randomID()
	at := s.accessToken(req, family, clientID, authTime)
	rt := store.OAuthToken{ID: randomID(), Kind: store.OAuthRefresh, Hash: hashSecret(refresh), Family: family, ClientID: clientID, Principal: req.GetSubject(),
		Scopes: req.GetScopes(), Audience: req.GetAudience(), AuthTime: authTime, CreatedAt: now, ExpiresAt: now.Add(s.srv.refreshTTL)}
	var err error
	if isRefresh && current != "" {
		err = s.srv.store.Rotate(ctx, rr.tok.ID, now, at, rt)
		if errors.Is(err, store.ErrConflict) {
			// Two uses racing: the loser is a reuse.
			s.srv.store.RevokeFamily(ctx, family, now)
			return "", "", time.Time{}, op.ErrInvalidRefreshToken
		}
	} else {
		if err = s.srv.store.CreateToken(ctx, rt); err == nil {
			err = s.srv.store.CreateToken(ctx, at)
		}
	}
	if err != nil {
		return "", "", time.Time{}, err
	}
	if err := s.srv.store.TouchClient(ctx, clientID, now); err != nil {
		s.srv.log.Warn("noting a client's use", "client", clientID, "err", err)
	}
	return at.ID, refresh, at.ExpiresAt, nil
}

func (s *storage) TokenRequestByRefreshToken(ctx context.Context, token string) (op.RefreshTokenRequest, error) {
	t, err := s.srv.store.TokenByHash(ctx, hashSecret(token))
	now := s.srv.now()
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, op.ErrInvalidRefreshToken
	case err != nil:
		return nil, err
	case !t.RevokedAt.IsZero() || !now.Before(t.ExpiresAt):
		return nil, op.ErrInvalidRefreshToken
	case !t.RotatedAt.IsZero():
		// A rotated token used again was stolen from one of its two
		// users: end the whole grant (OAuth 2.1 §4.3.1).
		n, _ := s.srv.store.RevokeFamily(ctx, t.Family, now)
		s.srv.log.Warn("a rotated refresh token was used again: its grant is revoked", "principal", t.Principal, "client", t.ClientID, "revoked", n)
		return nil, op.ErrInvalidRefreshToken
	}
	if _, err := s.srv.activeUser(ctx, t.Principal); err != nil {
		return nil, op.ErrInvalidRefreshToken
	}
	return &refreshRequest{tok: t, scopes: t.Scopes}, nil
}

func (s *storage) TerminateSession(context.Context, string, string) error { return nil }

func (s *storage) RevokeToken(ctx context.Context, tokenOrID, _, clientID string) *oidc.Error {
	t, err := s.srv.store.Token(ctx, tokenOrID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil // RFC 7009 §2.2: an unknown token is no error
	case err != nil:
		return oidc.ErrServerError().WithParent(err)
	case t.ClientID != clientID:
		return nil // not this client's: nothing revoked
	}
	if _, err := s.srv.store.RevokeFamily(ctx, t.Family, s.srv.now()); err != nil {
		return oidc.ErrServerError().WithParent(err)
	}
	return nil
}

func (s *storage) GetRefreshTokenInfo(ctx context.Context, clientID, token string) (string, string, error) {
	t, err := s.srv.store.TokenByHash(ctx, hashSecret(token))
	if err != nil || t.ClientID != clientID {
		return "", "", op.ErrInvalidRefreshToken
	}
	return t.Principal, t.ID, nil
}

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) { return s.srv.key, nil }

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{publicKey{s.srv.key}}, nil
}

func (s *storage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.srv.store.Client(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, oidc.ErrInvalidClient().WithDescription("unknown client")
	}
	if err != nil {
		return nil, err
	}
	return &client{c: c, srv: s.srv}, nil
}

func (s *storage) AuthorizeClientIDSecret(ctx context.Context, id, secret string) error {
	c, err := s.srv.store.Client(ctx, id)
	if err != nil || c.SecretHash == "" || subtle.ConstantTimeCompare([]byte(c.SecretHash), []byte(hashSecret(secret))) != 1 {
		return oidc.ErrInvalidClient().WithDescription("client authentication failed")
	}
	return nil
}

func (s *storage) SetUserinfoFromScopes(_ context.Context, ui *oidc.UserInfo, userID, _ string, _ []string) error {
	ui.Subject = userID
	return nil
}

func (s *storage) SetUserinfoFromToken(_ context.Context, ui *oidc.UserInfo, _, subject, _ string) error {
	ui.Subject = subject
	return nil
}

func (s *storage) SetIntrospectionFromToken(_ context.Context, ir *oidc.IntrospectionResponse, _, subject, clientID string) error {
	ir.Subject, ir.ClientID = subject, clientID
	return nil
}

func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("JWT client authentication is not supported")
}

func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("the JWT profile grant is not supported")
}

func (s *storage) Health(context.Context) error { return nil }

// signingKey is the RSA key access tokens are signed with.
type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *signingKey) Key() any                                    { return k.key }
func (k *signingKey) ID() string                                  { return k.id }

type publicKey struct{ k *signingKey }

func (p publicKey) ID() string                         { return p.k.id }
func (p publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (p publicKey) Use() string                        { return "sig" }
func (p publicKey) Key() any                           { return &p.k.key.PublicKey }

// client is a registered client as op sees it.
type client struct {
	c   store.OAuthClient
	srv *Server
}

func (c *client) GetID() string                    { return c.c.ID }
func (c *client) RedirectURIs() []string           { return c.c.RedirectURIs }
func (c *client) PostLogoutRedirectURIs() []string { return nil }
func (c *client) ApplicationType() op.ApplicationType {
	// Native: loopback redirects on any port (RFC 8252 §7.3), private-use
	// schemes and https.
	return op.ApplicationTypeNative
}
func (c *client) AuthMethod() oidc.AuthMethod {
	if c.c.SecretHash == "" {
		return oidc.AuthMethodNone
	}
	return oidc.AuthMethodBasic
}
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
}
func (c *client) LoginURL(id string) string            { return c.srv.issuer + LoginPath + "?id=" + id }
func (c *client) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeJWT }
func (c *client) IDTokenLifetime() time.Duration       { return c.srv.accessTTL }
func (c *client) DevMode() bool                        { return false }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c *client) ClockSkew() time.Duration             { return 0 }
func (c *client) IsScopeAllowed(scope string) bool     { return scope == ScopeMCP }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return slices.Clone(s) }
}

var (
	_ op.Storage             = (*storage)(nil)
	_ op.AuthRequest         = (*authRequest)(nil)
	_ op.RefreshTokenRequest = (*refreshRequest)(nil)
	_ op.Client              = (*client)(nil)
	_ op.SigningKey          = (*signingKey)(nil)
	_ op.Key                 = publicKey{}
)
