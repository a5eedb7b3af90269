package auth_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/legate-mcp/legate/auth/authtest"
)

// invalid is the RFC 6750 error a 401 for a bad token names.
const invalid = `error="invalid_token"`

func TestInvalidTokensAreNamedInTheChallenge(t *testing.T) {
	d := authtest.NewIDP(t)
	ts := tokenStore(t)
	expired := func() string {
		c := d.Claims("alice")
		c["exp"] = time.Now().Add(-time.Hour)
		return d.Sign(c, d.Key)
	}()
	for name, tc := range map[string]struct {
		doc, token, want string
	}{
		"static token, no token":        {"auth:\n  tokens: true\n", "", "Bearer"},
		"static token, unknown token":   {"auth:\n  tokens: true\n", "lgt_nope", "Bearer " + invalid},
		"with metadata, no token":       {d.Config(""), "", challenge},
		"with metadata, unknown static": {d.Config(""), "lgt_nope", challenge + ", " + invalid},
		"with metadata, expired access": {d.Config(""), expired, challenge + ", " + invalid},
		"with metadata, garbage":        {d.Config(""), "not-a-jwt", challenge + ", " + invalid},
	} {
		t.Run(name, func(t *testing.T) {
			w := call(newAuth(t, tc.doc, ts).Middleware()(whoami), tc.token)
			if w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") != tc.want {
				t.Fatalf("status %d, WWW-Authenticate %q, want %q", w.Code, w.Header().Get("WWW-Authenticate"), tc.want)
			}
		})
	}
}
