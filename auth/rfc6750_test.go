package auth_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/auth/authtest"
)

// invalid is the RFC 6750 error a 401 for a bad token names; described,
// its description where no metadata names how to get a token.
const (
	invalid   = `error="invalid_token"`
	described = `error_description="the token is unknown, expired or revoked"`
)

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
		"static token, no token":        {"auth:\n  tokens: true\n", "", `Bearer realm="legate"`},
		"static token, unknown token":   {"auth:\n  tokens: true\n", "lgt_nope", `Bearer realm="legate", ` + invalid + ", " + described},
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

// A 401 says how to get a token: `legate token create`, and signing in
// with OAuth where it is on.
func TestRefusalsSayHowToGetAToken(t *testing.T) {
	d := authtest.NewIDP(t)
	ts := tokenStore(t)
	const create = "legate token create NAME"
	for name, tc := range map[string]struct {
		doc, token string
		want       []string
		not        string
	}{
		"static tokens, no token": {"auth:\n  tokens: true\n", "", []string{"no bearer token: ", create}, "OAuth"},
		"static tokens, unknown":  {"auth:\n  tokens: true\n", "lgt_nope", []string{"unknown token: ", create}, "OAuth"},
		"with OAuth, no token":    {d.Config(""), "", []string{"no bearer token: ", create, "sign in with OAuth"}, ""},
		"OAuth only, no token":    {d.Config("  tokens: false\n"), "", []string{"no bearer token: ", "sign in with OAuth"}, create},
	} {
		t.Run(name, func(t *testing.T) {
			w := call(newAuth(t, tc.doc, ts).Middleware()(whoami), tc.token)
			body := w.Body.String()
			if w.Code != http.StatusUnauthorized || strings.Count(body, "\n") != 1 {
				t.Fatalf("status %d, body %q", w.Code, body)
			}
			for _, want := range tc.want {
				if !strings.Contains(body, want) {
					t.Errorf("body %q does not say %q", body, want)
				}
			}
			if tc.not != "" && strings.Contains(body, tc.not) {
				t.Errorf("body %q says %q", body, tc.not)
			}
		})
	}
}
