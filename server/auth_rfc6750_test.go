package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
)

// invalid is the RFC 6750 error a 401 for a bad token names.
const invalid = `error="invalid_token"`

func TestInvalidTokensAreNamedInTheChallenge(t *testing.T) {
	d := newIDP(t)
	ts := tokenStore(t)
	expired := func() string {
		c := d.claims("alice")
		c["exp"] = time.Now().Add(-time.Hour)
		return d.sign(c, d.key)
	}()
	for name, tc := range map[string]struct {
		doc, token, want string
	}{
		"static token, no token":        {"auth:\n  tokens: true\n", "", "Bearer"},
		"static token, unknown token":   {"auth:\n  tokens: true\n", "lgt_nope", "Bearer " + invalid},
		"with metadata, no token":       {d.config(""), "", challenge},
		"with metadata, unknown static": {d.config(""), "lgt_nope", challenge + ", " + invalid},
		"with metadata, expired access": {d.config(""), expired, challenge + ", " + invalid},
		"with metadata, garbage":        {d.config(""), "not-a-jwt", challenge + ", " + invalid},
	} {
		t.Run(name, func(t *testing.T) {
			w := call(newAuth(t, tc.doc, ts).Middleware()(whoami), tc.token)
			if w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") != tc.want {
				t.Fatalf("status %d, WWW-Authenticate %q, want %q", w.Code, w.Header().Get("WWW-Authenticate"), tc.want)
			}
		})
	}
}

func TestWrongAdminTokenIsNamedInTheChallenge(t *testing.T) {
	cfg, err := config.Parse([]byte(testConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := server.New(context.Background(), server.Options{Config: cfg, Store: memStore(t), AdminToken: "right"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	base := strings.TrimSuffix(serve(t, g), "/mcp") + "/admin/v1/approvals"
	for name, tc := range map[string]struct{ auth, want string }{
		"none":  {"", `Bearer realm="legate-admin"`},
		"wrong": {"Bearer wrong", `Bearer realm="legate-admin", ` + invalid},
	} {
		h := http.Header{}
		if tc.auth != "" {
			h.Set("Authorization", tc.auth)
		}
		resp := send(t, "GET", base, h)
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != tc.want {
			t.Errorf("%s: status %d, WWW-Authenticate %q, want %q", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), tc.want)
		}
	}
}
