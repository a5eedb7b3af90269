package oauth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"net/http"
	"regexp"
	"strings"
)

// The browser cookie binds an authorization request to the browser that
// made it: /oauth/authorize gives the browser a random value (or keeps
// the one it has) and stores its hash with the request; the login page,
// the login and consent posts, the upstream sign-in and the callback
// that issues the code all refuse a browser without it. A login link
// sent to someone else, with an authorization request made by whoever
// sent it, thus gets them nothing.
//
// It is SameSite=Lax, not Strict, because the browser arrives at
// /oauth/authorize, and from there at the login page, by a top-level
// navigation another site (the MCP client's) started, and comes back
// from an upstream identity provider the same way: a Strict cookie is
// not sent on either. Lax still keeps it off another site's posts and
// subresource requests. On https it is a __Host- cookie, so no other
// host (a sibling subdomain) can set it.
const (
	browserCookie       = "legate_oauth"
	secureBrowserCookie = "__Host-legate_oauth"
)

// browserValueRE is the shape of a browser cookie's value (randomID).
var browserValueRE = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// secureCookies reports whether the cookie is sent over https only: the
// issuer is http only on a loopback address (checked by config).
func (s *Server) secureCookies() bool { return !strings.HasPrefix(s.issuer, "http://") }

func (s *Server) browserCookieName() string {
	if s.secureCookies() {
		return secureBrowserCookie
	}
	return browserCookie
}

// browserValue is the browser's cookie value, "" when it has none of the
// right shape.
func (s *Server) browserValue(r *http.Request) string {
	c, err := r.Cookie(s.browserCookieName())
	if err != nil || !browserValueRE.MatchString(c.Value) {
		return ""
	}
	return c.Value
}

// ensureBrowser returns the browser's cookie value, giving it a new one
// when it has none.
func (s *Server) ensureBrowser(w http.ResponseWriter, r *http.Request) string {
	if v := s.browserValue(r); v != "" {
		return v
	}
	v := randomID()
	c := &http.Cookie{Name: s.browserCookieName(), Value: v, Path: "/oauth/", HttpOnly: true, Secure: s.secureCookies(), SameSite: http.SameSiteLaxMode}
	if c.Secure {
		c.Path = "/" // required of a __Host- cookie
	}
	http.SetCookie(w, c)
	return v
}

// sameBrowser reports whether r comes from the browser a was made in.
func (s *Server) sameBrowser(r *http.Request, a *authRequest) bool {
	v := s.browserValue(r)
	return v != "" && a.Browser != "" && subtle.ConstantTimeCompare([]byte(a.Browser), []byte(hashSecret(v))) == 1
}

// formToken is the CSRF token of the forms about request id in the
// browser whose cookie is browser: keyed by a secret of the server, so
// that knowing (or having planted) the cookie is not enough to forge it.
func (s *Server) formToken(browser, id string) string {
	m := hmac.New(sha256.New, s.formKey)
	m.Write([]byte("form\x00" + browser + "\x00" + id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// deriveFormKey derives the key of the forms' tokens from the signing
// key, which every replica shares.
func deriveFormKey(k *signingKey) []byte {
	m := hmac.New(sha256.New, []byte("legate oauth form key"))
	m.Write(x509.MarshalPKCS1PrivateKey(k.key))
	return m.Sum(nil)
}

type browserKey struct{}

// withBrowser hands the browser's cookie value from /oauth/authorize to
// CreateAuthRequest, which op calls with the request's context.
func withBrowser(ctx context.Context, value string) context.Context {
	return context.WithValue(ctx, browserKey{}, value)
}

func browserFrom(ctx context.Context) string {
	v, _ := ctx.Value(browserKey{}).(string)
	return v
}
