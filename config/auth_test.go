package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate/config"
)

func TestAuthSection(t *testing.T) {
	f, err := config.Parse([]byte(`auth:
  resource: https://legate.example.com/mcp
  oauth:
    issuer: https://idp.example.com/
    jwks_url: https://idp.example.com/.well-known/jwks.json
    jwks_refresh: 5m
    authorization_servers: [https://idp.example.com/]
    claims: {principal: email, tenant: org, role: roles, profile: profile}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	a := f.Auth
	if !a.Enabled() || !a.TokensEnabled() || a.OAuth.Claims.Principal != "email" || time.Duration(a.OAuth.JWKSRefresh) != 5*time.Minute {
		t.Fatalf("got %+v %+v", a, a.OAuth)
	}

	enabled := map[string]struct{ enabled, tokens bool }{
		"":                                      {false, false},
		"auth: {allow_unauthenticated: true}\n": {false, false},
		"auth: {tokens: true}\n":                {true, true},
		"auth: {tokens: false}\n":               {false, false},
		"auth: {resource: http://127.0.0.1:8080/mcp}\n": {true, true},
	}
	for doc, want := range enabled {
		f, err := config.Parse([]byte(doc), env(nil))
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		if f.Auth.Enabled() != want.enabled || f.Auth.TokensEnabled() != want.tokens {
			t.Errorf("%q: enabled %v, tokens %v", doc, f.Auth.Enabled(), f.Auth.TokensEnabled())
		}
	}
}

func TestAuthErrorsNameTheKeyPath(t *testing.T) {
	tests := map[string]struct {
		yaml string
		want []string
	}{
		"oauth without resource": {"auth:\n  oauth: {issuer: https://i.example/, jwks_url: https://i.example/k}\n", []string{"auth.resource: is required with oauth"}},
		"oauth without issuer and keys": {"auth:\n  resource: https://l.example/mcp\n  oauth: {}\n",
			[]string{"auth.oauth.issuer: is required", "auth.oauth.jwks_url: is required"}},
		"keys over http": {"auth:\n  resource: https://l.example/mcp\n  oauth: {issuer: https://i.example/, jwks_url: http://i.example/k}\n",
			[]string{"auth.oauth.jwks_url:", "must use https"}},
		"relative resource":    {"auth:\n  resource: /mcp\n", []string{"auth.resource:", "not an absolute http(s) URL"}},
		"resource fragment":    {"auth:\n  resource: https://l.example/mcp#x\n", []string{"auth.resource:", "fragment"}},
		"nobody can log in":    {"auth:\n  resource: https://l.example/mcp\n  tokens: false\n", []string{"auth.tokens: is false and oauth is not set"}},
		"bad server":           {"auth:\n  resource: https://l.example/mcp\n  oauth: {issuer: https://i.example/, jwks_url: https://i.example/k, authorization_servers: [ftp://x]}\n", []string{"auth.oauth.authorization_servers[0]:"}},
		"negative refresh":     {"auth:\n  resource: https://l.example/mcp\n  oauth: {issuer: https://i.example/, jwks_url: https://i.example/k, jwks_refresh: -1s}\n", []string{"auth.oauth.jwks_refresh: must not be negative"}},
		"unknown key":          {"auth:\n  token: true\n", []string{`auth.token: unknown key (did you mean "tokens"?)`}},
		"unknown claim":        {"auth:\n  resource: https://l.example/mcp\n  oauth: {issuer: https://i.example/, jwks_url: https://i.example/k, claims: {user: x}}\n", []string{"auth.oauth.claims.user: unknown key"}},
		"credentials in a URL": {"auth:\n  resource: https://u:pw@l.example/mcp\n", []string{"auth.resource:", "must not hold a user name or password"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := config.Parse([]byte(tc.yaml), env(nil))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "pw@") {
				t.Errorf("the error shows a password: %v", err)
			}
		})
	}
	// http is fine for keys on loopback (a local issuer, tests).
	if _, err := config.Parse([]byte("auth:\n  resource: http://127.0.0.1:8080/mcp\n  oauth: {issuer: http://127.0.0.1:9000/, jwks_url: http://127.0.0.1:9000/jwks}\n"), env(nil)); err != nil {
		t.Fatal(err)
	}
}
