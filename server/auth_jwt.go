package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/legate-mcp/legate/config"
)

const (
	// defaultJWKSRefresh is how often the issuer's keys are fetched again.
	defaultJWKSRefresh = 15 * time.Minute
	// jwksRetry is the least time between fetches prompted by an unknown
	// key id or a failed fetch, so bad tokens cannot hammer the issuer.
	jwksRetry = 30 * time.Second
	// jwksTimeout bounds one fetch of the keys.
	jwksTimeout = 10 * time.Second
	// maxJWTSize bounds the access tokens parsed.
	maxJWTSize = 16 << 10
)

// jwtVerifier checks JWT access tokens: signed by one of the issuer's keys,
// from the issuer, for the resource, within exp and nbf.
type jwtVerifier struct {
	issuer   string
	audience string
	claims   config.Claims
	keys     *jwks
	log      *slog.Logger
}

func newJWTVerifier(resource string, o *config.OAuth, log *slog.Logger) *jwtVerifier {
	c := o.Claims
	c.Principal = claimName(c.Principal, "sub")
	c.Tenant = claimName(c.Tenant, "tenant")
	c.Role = claimName(c.Role, "role")
	c.Profile = claimName(c.Profile, "profile")
	refresh := time.Duration(o.JWKSRefresh)
	if refresh == 0 {
		refresh = defaultJWKSRefresh
	}
	// The JWKS URL is the operator's, not a model's, so a plain client
	// (the issuer may well be on a private network), hardened by jwx
	// against redirects from https to http.
	client := jwk.WrapHTTPClientDefaults(&http.Client{Timeout: jwksTimeout})
	return &jwtVerifier{issuer: o.Issuer, audience: resource, claims: c, log: log,
		keys: &jwks{url: o.JWKSURL, client: client, refresh: refresh, retry: jwksRetry, log: log}}
}

// claimName is the claim name s, or def when none is configured.
func claimName(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (v *jwtVerifier) verify(ctx context.Context, token string) (*auth.TokenInfo, error) {
	if len(token) > maxJWTSize {
		return nil, invalidToken("token too large")
	}
	msg, err := jws.Parse([]byte(token), jws.WithCompact())
	if err != nil || len(msg.Signatures()) != 1 {
		return nil, invalidToken("malformed token")
	}
	kid, _ := msg.Signatures()[0].ProtectedHeaders().KeyID()
	set, err := v.keys.get(ctx, kid)
	if err != nil {
		return nil, errors.New("the issuer's signing keys are unavailable")
	}
	tok, err := jwt.Parse([]byte(token),
		jwt.WithKeySet(set, jws.WithInferAlgorithmFromKey(true), jws.WithUseDefault(true)),
		jwt.WithIssuer(v.issuer),
		jwt.WithAudience(v.audience),
		jwt.WithRequiredClaim(jwt.ExpirationKey),
		jwt.WithAcceptableSkew(tokenClockSkew),
	)
	if err != nil {
		v.log.Debug("access token refused", "err", err)
		return nil, invalidToken(jwtRefusal(err))
	}
	p, err := v.principal(tok)
	if err != nil {
		return nil, err
	}
	exp, _ := tok.Expiration()
	return &auth.TokenInfo{UserID: sessionOwner(credentialJWT, p), Expiration: exp, Scopes: jwtScopes(tok), Extra: map[string]any{PrincipalKey: p}}, nil
}

// jwtRefusal says why jwt.Parse refused a token, without its details.
func jwtRefusal(err error) string {
	switch {
	case errors.Is(err, jwt.TokenExpiredError()):
		return "token expired"
	case errors.Is(err, jwt.TokenNotYetValidError()):
		return "token not yet valid"
	case errors.Is(err, jwt.InvalidAudienceError()):
		return "token not issued for this resource"
	case errors.Is(err, jwt.InvalidIssuerError()):
		return "token from another issuer"
	case errors.Is(err, jwt.MissingRequiredClaimError()):
		return "token without an expiration"
	case errors.Is(err, jwt.ValidateError()):
		return "token not valid"
	}
	return "signature not verified"
}

// principal maps the token's claims to a principal: the principal claim
// is required; an absent tenant or profile is none, an absent role user.
func (v *jwtVerifier) principal(tok jwt.Token) (*Principal, error) {
	role, _ := jwtClaim(tok, v.claims.Role)
	p := &Principal{Role: jwtRole(role)}
	for _, f := range []struct {
		name     string
		dst      *string
		required bool
	}{{v.claims.Principal, &p.Name, true}, {v.claims.Tenant, &p.Tenant, false}, {v.claims.Profile, &p.Profile, false}} {
		val, ok := jwtClaim(tok, f.name)
		s, isString := val.(string)
		switch {
		case !ok && !f.required:
		case !ok || f.required && s == "":
			return nil, invalidToken("token without the " + f.name + " claim")
		case !isString:
			return nil, invalidToken("the token's " + f.name + " claim is not a string")
		default:
			*f.dst = s
		}
	}
	return p, nil
}

// jwtClaim returns a claim's value; a name with dots that is not a claim is
// a path into nested objects.
func jwtClaim(tok jwt.Token, name string) (any, bool) {
	var v any
	if err := tok.Get(name, &v); err == nil {
		return v, true
	}
	first, rest, ok := strings.Cut(name, ".")
	if !ok || tok.Get(first, &v) != nil {
		return nil, false
	}
	for part := range strings.SplitSeq(rest, ".") {
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

// jwtRole is the highest role a role claim names: a string (of
// space-separated words) or a list; none named is user.
func jwtRole(v any) string {
	best := RoleUser
	consider := func(s string) {
		if roleRank[s] > roleRank[best] {
			best = s
		}
	}
	switch v := v.(type) {
	case string:
		for _, f := range strings.Fields(v) {
			consider(f)
		}
	case []string:
		for _, s := range v {
			consider(s)
		}
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				consider(s)
			}
		}
	}
	return best
}

// jwtScopes reads the scope claim (space-separated) or scp (a list).
func jwtScopes(tok jwt.Token) []string {
	if v, ok := jwtClaim(tok, "scope"); ok {
		if s, ok := v.(string); ok {
			return strings.Fields(s)
		}
	}
	v, _ := jwtClaim(tok, "scp")
	switch v := v.(type) {
	case string:
		return strings.Fields(v)
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// jwks holds the issuer's key set: fetched at first need, again in the
// background once older than refresh, and at once (at most every retry)
// when a token names a key it lacks, as after a rotation. Concurrent
// callers share one fetch.
type jwks struct {
	url     string
	client  *http.Client
	refresh time.Duration
	retry   time.Duration
	log     *slog.Logger

	mu       sync.Mutex
	set      jwk.Set
	fetched  time.Time     // last success
	tried    time.Time     // last attempt
	inflight chan struct{} // closed when the running fetch ends
}

var errNoSigningKeys = errors.New("no signing keys")

// get returns the key set, fetching it first if it has no key kid ("":
// any key will do).
func (j *jwks) get(ctx context.Context, kid string) (jwk.Set, error) {
	waited := false
	for {
		j.mu.Lock()
		now := time.Now()
		_, has := jwksKey(j.set, kid)
		missing := !has
		due := j.tried.IsZero() || now.Sub(j.tried) >= j.retry
		switch {
		case missing && !waited && j.inflight != nil:
			ch := j.inflight
			j.mu.Unlock()
			select {
			case <-ch:
				waited = true
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		case missing && !waited && due:
			ch := make(chan struct{})
			j.inflight, j.tried = ch, now
			j.mu.Unlock()
			j.fetch(ch)
			waited = true
			continue
		case !missing && j.inflight == nil && now.Sub(j.fetched) >= j.refresh && due:
			ch := make(chan struct{})
			j.inflight, j.tried = ch, now
			go j.fetch(ch)
		}
		set := j.set
		j.mu.Unlock()
		if set == nil {
			return nil, errNoSigningKeys
		}
		return set, nil
	}
}

// fetch fetches the key set, keeping the old one if it fails.
func (j *jwks) fetch(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), jwksTimeout)
	defer cancel()
	set, err := jwk.Fetch(ctx, j.url, jwk.WithHTTPClient(j.client))
	j.mu.Lock()
	defer j.mu.Unlock()
	if err != nil {
		j.log.Warn("fetching the issuer's signing keys", "url", j.url, "err", err)
	} else {
		j.set, j.fetched = set, time.Now()
	}
	j.inflight = nil
	close(done)
}

// jwksKey finds key kid in set; with kid "", any key counts.
func jwksKey(set jwk.Set, kid string) (jwk.Key, bool) {
	if set == nil {
		return nil, false
	}
	if kid == "" {
		return set.Key(0)
	}
	return set.LookupKeyID(kid)
}
