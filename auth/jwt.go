package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
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
	// maxJWKSSize bounds the key set read.
	maxJWKSSize = 1 << 20
)

// jwtAlgorithms are the signature algorithms an access token may use: the
// asymmetric ones of RFC 7518 and EdDSA. "none" and the HMAC ones (whose
// key would be the issuer's public key) are refused.
var jwtAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// jwtVerifier checks JWT access tokens: signed by one of the issuer's keys,
// from the issuer, for the resource asked of it, within exp and nbf.
type jwtVerifier struct {
	issuer string
	claims config.Claims
	keys   *jwks
	log    *slog.Logger
}

func newJWTVerifier(o *config.OAuth, log *slog.Logger) *jwtVerifier {
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
	// address a redirect names; a redirect from https to http is refused.
	var allow []string
	if hp, err := netguard.HostPort(o.JWKSURL); err == nil {
		allow = append(allow, hp)
	}
	client := netguard.NewClient(netguard.Options{Timeout: jwksTimeout, Allow: allow,
		Hint: "only the host of auth.oauth.jwks_url may be on a private network"})
	guard := client.CheckRedirect
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if via[len(via)-1].URL.Scheme == "https" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirect from https to %s refused", req.URL.Scheme)
		}
		return guard(req, via)
	}
	keys := &jwks{url: o.JWKSURL, client: client, refresh: refresh, retry: jwksRetry, log: log}
	keys.life, keys.end = context.WithCancel(context.Background())
	return &jwtVerifier{issuer: o.Issuer, claims: c, log: log, keys: keys}
}

// claimName is the claim name s, or def when none is configured.
func claimName(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// verify checks token, whose audience must name one of resources.
func (v *jwtVerifier) verify(ctx context.Context, token string, resources []string) (*sdkauth.TokenInfo, error) {
	if len(token) > maxJWTSize {
		return nil, invalidToken("token too large")
	}
	tok, err := jwt.ParseSigned(token, jwtAlgorithms)
	if err != nil || len(tok.Headers) != 1 {
		if _, ok := errors.AsType[*jose.ErrUnexpectedSignatureAlgorithm](err); ok {
			return nil, invalidToken("signature not verified")
		}
		return nil, invalidToken("malformed token")
	}
	kid := tok.Headers[0].KeyID
	set, err := v.keys.get(ctx, kid)
	if err != nil {
		return nil, errors.New("the issuer's signing keys are unavailable")
	}
	key, ok := jwksKey(set, kid)
	if !ok {
		return nil, invalidToken("signature not verified")
	}
	var std jwt.Claims
	var claims map[string]any
	if err := tok.Claims(key.Key, &std, &claims); err != nil {
		v.log.Debug("access token refused", "err", err)
		return nil, invalidToken("signature not verified")
	}
	if err := std.ValidateWithLeeway(jwt.Expected{Issuer: v.issuer, AnyAudience: jwt.Audience(resources)}, tokenClockSkew); err != nil {
		v.log.Debug("access token refused", "err", err)
		return nil, invalidToken(jwtRefusal(err))
	}
	if std.Expiry == nil {
		return nil, invalidToken("token without an expiration")
	}
	p, err := v.principal(claims)
	if err != nil {
		return nil, err
	}
	return &sdkauth.TokenInfo{UserID: sessionOwner(credentialJWT, p), Expiration: std.Expiry.Time(), Scopes: jwtScopes(claims), Extra: map[string]any{PrincipalKey: p}}, nil
}

// jwtRefusal says why the claims of a verified token were refused,
// without their details.
func jwtRefusal(err error) string {
	switch {
	case errors.Is(err, jwt.ErrExpired):
		return "token expired"
	case errors.Is(err, jwt.ErrNotValidYet), errors.Is(err, jwt.ErrIssuedInTheFuture):
		return "token not yet valid"
	case errors.Is(err, jwt.ErrInvalidAudience):
		return "token not issued for this resource"
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return "token from another issuer"
	}
	return "token not valid"
}

// principal maps the token's claims to a principal: the principal claim
// is required; an absent tenant or profile is none, an absent role user.
func (v *jwtVerifier) principal(tok map[string]any) (*Principal, error) {
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
func jwtClaim(tok map[string]any, name string) (any, bool) {
	if v, ok := tok[name]; ok {
		return v, true
	}
	first, rest, ok := strings.Cut(name, ".")
	v, found := tok[first]
	if !ok || !found {
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
func jwtScopes(tok map[string]any) []string {
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
// A fetch runs only when a token needs it, and Close cancels it and waits.
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
	set      *jose.JSONWebKeySet
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
func (j *jwks) get(ctx context.Context, kid string) (*jose.JSONWebKeySet, error) {
	asked := time.Now()
	for {
		j.mu.Lock()
		// A token naming no key id needs no fetch once any key is held.
		_, has := jwksKey(j.set, kid)
		has = has || kid == "" && j.set != nil && len(j.set.Keys) > 0
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
	set, err := j.download(ctx)
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

// download reads the key set at j.url.
func (j *jwks) download(ctx context.Context) (*jose.JSONWebKeySet, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := j.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxJWKSSize)).Decode(&set); err != nil {
		return nil, fmt.Errorf("reading the key set: %w", err)
	}
	return &set, nil
}

// jwksKey finds the signing key kid in set; a token naming no key id is
// verified with the set's only key, as when there is one.
func jwksKey(set *jose.JSONWebKeySet, kid string) (jose.JSONWebKey, bool) {
	if set == nil {
		return jose.JSONWebKey{}, false
	}
	if kid == "" {
		if len(set.Keys) == 1 && set.Keys[0].Use != "enc" {
			return set.Keys[0], true
		}
		return jose.JSONWebKey{}, false
	}
	for _, k := range set.Key(kid) {
		if k.Use != "enc" {
			return k, true
		}
	}
	return jose.JSONWebKey{}, false
}
