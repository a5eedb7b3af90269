package auth

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
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors/netguard"
)

const (
	// defaultJWKSRefresh is how often the issuer's keys are fetched again.
	defaultJWKSRefresh = 15 * time.Minute
	// jwksRetry is the least time between fetches prompted by an unknown
	// key id or a failed fetch, so tokens naming made-up keys cannot hammer
	// the issuer: a token naming a key not yet fetched waits for the next
	// fetch (at most this long) instead of being refused.
	jwksRetry = time.Second
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
	// The JWKS URL is the operator's, and may well be on a private
	// network: netguard allows its host and port, and no other private
	// address a redirect names; jwx hardens it against redirects from
	// https to http.
	var allow []string
	if hp, err := netguard.HostPort(o.JWKSURL); err == nil {
		allow = append(allow, hp)
	}
	client := jwk.WrapHTTPClientDefaults(netguard.NewClient(netguard.Options{Timeout: jwksTimeout, Allow: allow,
		Hint: "only the host of auth.oauth.jwks_url may be on a private network"}))
	keys := &jwks{url: o.JWKSURL, client: client, refresh: refresh, retry: jwksRetry, log: log}
	keys.life, keys.end = context.WithCancel(context.Background())
	return &jwtVerifier{issuer: o.Issuer, audience: resource, claims: c, log: log, keys: keys}
}

// claimName is the claim name s, or def when none is configured.
func claimName(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (v *jwtVerifier) verify(ctx context.Context, token string) (*sdkauth.TokenInfo, error) {
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
	return &sdkauth.TokenInfo{UserID: sessionOwner(credentialJWT, p), Expiration: exp, Scopes: jwtScopes(tok), Extra: map[string]any{PrincipalKey: p}}, nil
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
// background once older than refresh, and at once when a token names a key
// it lacks, as after a rotation — at most every retry, a token that comes
// sooner waiting for that fetch. Concurrent callers share one fetch.
//
// jwx fetches and parses the set (jwk.Fetch); its jwk.Cache is not used.
// That cache refreshes on a schedule from worker goroutines of its own
// (httprc); a fetch prompted by an unknown key id, bounded to one a
// second, with the token waiting for a fetch begun after it arrived, would
// still be this type's, on top of Cache.Refresh, which bounds nothing. Here
// a fetch runs only when a token needs it, and Close cancels it and waits.
type jwks struct {
	url     string
	client  *http.Client
	refresh time.Duration
	retry   time.Duration
	log     *slog.Logger

	// life ends with close, cancelling a fetch in flight; fetching
	// counts the fetches, so close can wait for them.
	life     context.Context
	end      context.CancelFunc
	fetching sync.WaitGroup

	mu       sync.Mutex
	set      jwk.Set
	fetched  time.Time     // last success
	tried    time.Time     // start of the last attempt
	inflight chan struct{} // closed when the running fetch ends
	closed   bool          // no fetch starts once closed
}

// start begins a fetch in the background, unless closed; j.mu is held.
func (j *jwks) start() chan struct{} {
	ch := make(chan struct{})
	j.inflight, j.tried = ch, time.Now()
	if j.closed {
		j.inflight = nil
		close(ch)
		return ch
	}
	j.fetching.Go(func() { j.fetch(ch) })
	return ch
}

// close cancels a fetch in flight and waits for it to end.
func (j *jwks) close() {
	j.mu.Lock()
	j.closed = true
	j.mu.Unlock()
	j.end()
	j.fetching.Wait()
}

var errNoSigningKeys = errors.New("no signing keys")

// get returns the key set once it has key kid ("": any key will do), or
// once a fetch begun after the call has ended without it (the token is
// then refused by its signature).
func (j *jwks) get(ctx context.Context, kid string) (jwk.Set, error) {
	asked := time.Now()
	for {
		j.mu.Lock()
		_, has := jwksKey(j.set, kid)
		if has {
			j.refreshIfStale()
		}
		if has || j.inflight == nil && !j.tried.IsZero() && !j.tried.Before(asked) {
			set := j.set
			j.mu.Unlock()
			if set == nil {
				return nil, errNoSigningKeys
			}
			return set, nil
		}
		wait := j.retry - time.Since(j.tried)
		ch := j.inflight
		if ch == nil && (j.tried.IsZero() || wait <= 0) {
			ch = j.start()
		}
		j.mu.Unlock()
		var next <-chan time.Time // the last fetch was too recent: wait for the next
		if ch == nil {
			next = time.After(wait)
		}
		select {
		case <-ch:
		case <-next:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// refreshIfStale starts a background fetch when the set is older than
// refresh and none ran within retry; j.mu is held.
func (j *jwks) refreshIfStale() {
	if j.inflight == nil && time.Since(j.fetched) >= j.refresh && time.Since(j.tried) >= j.retry {
		j.start()
	}
}

// fetch fetches the key set, keeping the old one if it fails.
func (j *jwks) fetch(done chan struct{}) {
	ctx, cancel := context.WithTimeout(j.life, jwksTimeout)
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
