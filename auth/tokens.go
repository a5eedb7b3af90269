package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/legate-mcp/legate/store"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
)

func (a *Authenticator) verifyStatic(ctx context.Context, token string) (*sdkauth.TokenInfo, error) {
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
	return &sdkauth.TokenInfo{UserID: sessionOwner(credentialToken, p), Expiration: time.Now().Add(staticTokenLifetime), Extra: map[string]any{PrincipalKey: p}}, nil
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

// TokenPrefix begins every static token, telling it from a JWT.
const TokenPrefix = "lgt_"

// TokenNamePattern returns what a static token's name (its principal) must
// match, compiled at its first use (its counted repetition compiles to
// 40 KB).
var TokenNamePattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$`)
})

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
	case !TokenNamePattern().MatchString(p.Name):
		return "", fmt.Errorf("token name %q must match %s", p.Name, TokenNamePattern())
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
