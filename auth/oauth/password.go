package oauth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/store"
)

// The argon2id parameters of new password hashes (RFC 9106's second
// recommended option, lighter on memory: 19 MiB, as OWASP advises).
const (
	argonTime    = 2
	argonMemory  = 19 * 1024
	argonThreads = 1
	argonKeyLen  = 32
)

// MinPasswordLen is the shortest password accepted.
const MinPasswordLen = 12

// maxPasswordLen bounds the work one login can ask of the server.
const maxPasswordLen = 1024

// HashPassword returns the encoded argon2id hash of password with a fresh
// salt.
func HashPassword(password string) string {
	salt := make([]byte, 16)
	rand.Read(salt)
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

// CheckPassword reports whether password matches an encoded argon2id hash.
func CheckPassword(encoded, password string) bool {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || len(password) > maxPasswordLen {
		return false
	}
	var version int
	var m uint32
	var t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || m > 1<<20 || t == 0 || t > 16 || p == 0 {
		return false
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	want, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// dummyHash is checked against when the user is unknown or disabled, so
// a refusal takes as long whether the account exists or not: a hash made
// once by HashPassword with the parameters above (a test keeps them
// alike), not at start-up, where its 19 MiB and tens of milliseconds
// would be every command's and every server's.
const dummyHash = "$argon2id$v=19$m=19456,t=2,p=1$V80rcqtC9c+GC10FQKKkTw$1cdMlh14q0JA6lpiZU6mT+rd3nnh8xxolXIa5T9j8W0"

// checkPasswordPolicy refuses passwords too short or too long.
func checkPasswordPolicy(password string) error {
	switch n := utf8.RuneCountInString(password); {
	case n < MinPasswordLen:
		return fmt.Errorf("the password must be at least %d characters long", MinPasswordLen)
	case len(password) > maxPasswordLen:
		return fmt.Errorf("the password must be at most %d bytes long", maxPasswordLen)
	}
	return nil
}

// AddUser makes a local account; a name in use is an error wrapping
// store.ErrExists.
func AddUser(ctx context.Context, users store.UserStore, p auth.Principal, password string) error {
	if p.Role == "" {
		p.Role = auth.RoleUser
	}
	switch {
	case !auth.TokenNamePattern().MatchString(p.Name):
		return fmt.Errorf("user name %q must match %s", p.Name, auth.TokenNamePattern())
	case !auth.IsRole(p.Role):
		return fmt.Errorf("role %q: must be %s, %s or %s", p.Role, auth.RoleUser, auth.RoleApprover, auth.RoleAdmin)
	}
	for _, f := range [][2]string{{"tenant", p.Tenant}, {"profile", p.Profile}} {
		if len(f[1]) > 128 || strings.IndexFunc(f[1], unicode.IsControl) >= 0 {
			return fmt.Errorf("%s %q: at most 128 characters, no control characters", f[0], f[1])
		}
	}
	if err := checkPasswordPolicy(password); err != nil {
		return err
	}
	return users.Create(ctx, store.User{Name: p.Name, Tenant: p.Tenant, Role: p.Role, Profile: p.Profile, PasswordHash: HashPassword(password)})
}

// SetPassword replaces a user's password.
func SetPassword(ctx context.Context, users store.UserStore, name, password string) error {
	if err := checkPasswordPolicy(password); err != nil {
		return err
	}
	return users.SetPassword(ctx, name, HashPassword(password))
}

// DisableUser disables a user and revokes every grant of theirs: their
// access tokens stop working at once, their refresh tokens too.
func DisableUser(ctx context.Context, st store.Store, name string) (revoked int, err error) {
	if err := st.Users().SetDisabled(ctx, name, true); err != nil {
		return 0, err
	}
	// Every check also looks at the user, so revoking is belt and braces
	// that also shows in token list.
	toks, err := st.OAuth().RefreshTokens(ctx, timeNow())
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, t := range toks {
		if t.Principal == name {
			n, err := st.OAuth().RevokeFamily(ctx, t.Family, timeNow())
			revoked += n
			errs = append(errs, err)
		}
	}
	return revoked, errors.Join(errs...)
}

var timeNow = time.Now
