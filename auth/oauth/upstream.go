package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/zitadel/oidc/v3/pkg/client/rp"
	"github.com/zitadel/oidc/v3/pkg/oidc"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors/netguard"
	"github.com/legate-mcp/legate/store"
)

// The paths of the login through an upstream OpenID Connect provider.
const (
	UpstreamStartPath    = "/oauth/upstream/start"
	UpstreamCallbackPath = "/oauth/upstream/callback"
)

// upstreamHashPrefix marks the password hash of a user made by an
// upstream login: no password matches it, and it names the provider.
const upstreamHashPrefix = "!oidc "

// upstreamLogin logs people in with an OpenID Connect provider (zitadel's
// rp package: discovery, code exchange with PKCE, ID token checks). The
// relying party is made at first use, so Legate starts while the provider
// is down.
type upstreamLogin struct {
	cfg      config.UpstreamLogin
	secret   string
	redirect string
	claims   config.Claims

	mu    sync.Mutex
	party rp.RelyingParty
}

func newUpstreamLogin(issuer string, c *config.UpstreamLogin) (*upstreamLogin, error) {
	if c == nil {
		return nil, nil
	}
	u := &upstreamLogin{cfg: *c, redirect: issuer + UpstreamCallbackPath, claims: c.Claims}
	if c.ClientSecretEnv != "" {
		u.secret = os.Getenv(c.ClientSecretEnv)
		if u.secret == "" {
			return nil, fmt.Errorf("auth.oauth_server.upstream: the environment variable %s (client_secret_env) is unset or empty", c.ClientSecretEnv)
		}
	}
	if u.cfg.Name == "" {
		u.cfg.Name = "single sign-on"
	}
	u.claims.Principal = orName(u.claims.Principal, "sub")
	u.claims.Tenant = orName(u.claims.Tenant, "tenant")
	u.claims.Role = orName(u.claims.Role, "role")
	u.claims.Profile = orName(u.claims.Profile, "profile")
	return u, nil
}

func orName(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// relyingParty returns the relying party, reading the provider's
// discovery document at first use.
func (u *upstreamLogin) relyingParty(ctx context.Context) (rp.RelyingParty, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.party != nil {
		return u.party, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p, err := rp.NewRelyingPartyOIDC(ctx, u.cfg.Issuer, u.cfg.ClientID, u.secret, u.redirect, []string{oidc.ScopeOpenID, oidc.ScopeProfile, oidc.ScopeEmail},
		rp.WithHTTPClient(u.httpClient()))
	if err != nil {
		return nil, err
	}
	u.party = p
	return p, nil
}

// httpClient reaches the provider: the issuer is the operator's and may
// be on a private network, so netguard allows its host and port; every
// other address its discovery document names (token endpoint, keys) must
// be public.
func (u *upstreamLogin) httpClient() *http.Client {
	var allow []string
	if hp, err := netguard.HostPort(u.cfg.Issuer); err == nil {
		allow = append(allow, hp)
	}
	return netguard.NewClient(netguard.Options{Timeout: 10 * time.Second, Allow: allow,
		Hint: "an identity provider's discovery document may name a private address only at the issuer's own host and port"})
}

// upstreamStart sends the browser to the provider for the authorization
// request named by id, remembering a state and PKCE verifier with it.
func (s *Server) upstreamStart(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	a, _, ok := s.pendingRequest(w, r, r.URL.Query().Get("id"))
	if !ok {
		return
	}
	party, err := s.upstream.relyingParty(ctx)
	if err != nil {
		s.log.Error("reaching the upstream identity provider", "issuer", s.upstream.cfg.Issuer, "err", err)
		errorPage(w, http.StatusBadGateway, "The sign-in provider cannot be reached; try again later.")
		return
	}
	nonce, verifier := randomID(), randomID()
	a.UpstreamState, a.UpstreamVerifier = hashSecret(nonce), verifier
	if err := (&storage{srv: s}).putRequest(ctx, a); err != nil {
		s.log.Error("storing a login", "err", err)
		errorPage(w, http.StatusInternalServerError, "The login could not be started.")
		return
	}
	sum := sha256.Sum256([]byte(verifier))
	http.Redirect(w, r, rp.AuthURL(a.ID+"."+nonce, party, rp.WithCodeChallenge(base64.RawURLEncoding.EncodeToString(sum[:]))), http.StatusFound)
}

// upstreamCallback takes the provider's answer: the state must be the
// one this browser was sent with; the code is exchanged and the ID token
// checked; its claims name the principal, made or updated as a user
// whose password is none. Then the consent page.
func (s *Server) upstreamCallback(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	id, nonce, _ := strings.Cut(q.Get("state"), ".")
	a, c, ok := s.pendingRequest(w, r, id) // the browser that made the request
	if !ok {
		return
	}
	if a.UpstreamState == "" || subtle.ConstantTimeCompare([]byte(a.UpstreamState), []byte(hashSecret(nonce))) != 1 {
		errorPage(w, http.StatusForbidden, "This sign-in was not started in this browser.")
		return
	}
	if e := q.Get("error"); e != "" {
		errorPage(w, http.StatusUnauthorized, "The sign-in provider refused: "+e)
		return
	}
	party, err := s.upstream.relyingParty(ctx)
	if err != nil {
		errorPage(w, http.StatusBadGateway, "The sign-in provider cannot be reached; try again later.")
		return
	}
	tokens, err := rp.CodeExchange[*oidc.IDTokenClaims](ctx, q.Get("code"), party, rp.WithCodeVerifier(a.UpstreamVerifier))
	if err != nil {
		s.log.Info("upstream sign-in refused", "err", err)
		errorPage(w, http.StatusUnauthorized, "The sign-in could not be completed.")
		return
	}
	p, err := s.upstream.principal(tokens.IDTokenClaims)
	if err == nil {
		err = s.provisionUser(ctx, p)
	}
	if err != nil {
		s.log.Info("upstream sign-in refused", "err", err)
		errorPage(w, http.StatusForbidden, "Signed in, but "+err.Error()+".")
		return
	}
	a.Subject, a.AuthTime, a.UpstreamState, a.UpstreamVerifier = p.Name, s.now().UTC().Truncate(time.Second), "", ""
	if err := (&storage{srv: s}).putRequest(ctx, a); err != nil {
		errorPage(w, http.StatusInternalServerError, "The login could not be recorded.")
		return
	}
	s.renderConsent(w, a, c, store.User{Name: p.Name, Tenant: p.Tenant, Role: p.Role, Profile: p.Profile}, s.formToken(s.browserValue(r), a.ID))
}

// principal maps an ID token's claims to a principal, as the JWT
// verifier maps an access token's.
func (u *upstreamLogin) principal(c *oidc.IDTokenClaims) (*auth.Principal, error) {
	get := func(name string) (any, bool) {
		if name == "sub" {
			return c.Subject, c.Subject != ""
		}
		var v any = map[string]any(c.Claims)
		for part := range strings.SplitSeq(name, ".") {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[part]; !ok {
				return nil, false
			}
		}
		return v, true
	}
	p := &auth.Principal{Role: auth.RoleUser}
	name, _ := get(u.claims.Principal)
	p.Name, _ = name.(string)
	if !auth.TokenNamePattern().MatchString(p.Name) {
		return nil, fmt.Errorf("the %s claim does not name a principal Legate accepts", u.claims.Principal)
	}
	if v, ok := get(u.claims.Tenant); ok {
		p.Tenant, _ = v.(string)
	}
	if v, ok := get(u.claims.Profile); ok {
		p.Profile, _ = v.(string)
	}
	if v, ok := get(u.claims.Role); ok {
		p.Role = highestRole(v)
	}
	return p, nil
}

// highestRole is the highest role a role claim names (a string of words
// or a list); none named is user.
func highestRole(v any) string {
	var words []string
	switch v := v.(type) {
	case string:
		words = strings.Fields(v)
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				words = append(words, s)
			}
		}
	}
	best := auth.RoleUser
	for _, w := range []string{auth.RoleApprover, auth.RoleAdmin} {
		for _, got := range words {
			if got == w {
				best = w
			}
		}
	}
	return best
}

// provisionUser makes or updates the user of an upstream login; a local
// account (with a password) of the same name is never taken over, and a
// disabled user stays out.
func (s *Server) provisionUser(ctx context.Context, p *auth.Principal) error {
	mark := upstreamHashPrefix + s.upstream.cfg.Issuer
	u, err := s.users.Get(ctx, p.Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		err = s.users.Create(ctx, store.User{Name: p.Name, Tenant: p.Tenant, Role: p.Role, Profile: p.Profile, PasswordHash: mark})
		if errors.Is(err, store.ErrExists) {
			return s.provisionUser(ctx, p)
		}
		return err
	case err != nil:
		return err
	case u.PasswordHash != mark:
		return fmt.Errorf("the name %q belongs to another account here", p.Name)
	case u.Disabled:
		return fmt.Errorf("the account %q is disabled here", p.Name)
	case u.Tenant != p.Tenant || u.Role != p.Role || u.Profile != p.Profile:
		return s.users.Update(ctx, store.User{Name: p.Name, Tenant: p.Tenant, Role: p.Role, Profile: p.Profile, PasswordHash: mark})
	}
	return nil
}
