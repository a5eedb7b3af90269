package upconfig_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/upstream/upconfig"
	"github.com/legate-mcp/legate/vault"
)

func TestCredentialReferencesChecked(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  upconfig.Config
		want string // "" for valid
	}{
		{"token from the vault", upconfig.Config{ID: "a", URL: "https://x.invalid/mcp", Token: &vault.Ref{Vault: "a-token"}}, ""},
		{"headers", upconfig.Config{ID: "a", URL: "https://x.invalid/mcp", Headers: map[string]vault.Ref{"X-API-Key": {Env: "K"}}}, ""},
		{"two sources", upconfig.Config{ID: "a", URL: "https://x.invalid/mcp", Token: &vault.Ref{Env: "A", Vault: "b"}}, "u.token: must name exactly one source"},
		{"a person's connection", upconfig.Config{ID: "a", URL: "https://x.invalid/mcp", Token: &vault.Ref{Vault: "connections/x"}}, "u.token: vault: \"connections/x\" is a person's connection"},
		{"token beside header_env", upconfig.Config{ID: "a", URL: "https://x.invalid/mcp", HeaderEnv: map[string]string{"authorization": "T"}, Token: &vault.Ref{Vault: "t"}}, "u.token: sets the Authorization header, which header_env.authorization sets too"},
		{"token beside headers", upconfig.Config{ID: "a", URL: "https://x.invalid/mcp", Token: &vault.Ref{Vault: "t"}, Headers: map[string]vault.Ref{"Authorization": {Vault: "u"}}}, "u.headers.Authorization: sets the Authorization header, which token sets too"},
		{"bad header name", upconfig.Config{ID: "a", URL: "https://x.invalid/mcp", Headers: map[string]vault.Ref{"X Key": {Env: "K"}}}, `u.headers.X Key: "X Key" is not a valid header name`},
		{"stdio", upconfig.Config{ID: "a", Command: []string{"srv"}, Token: &vault.Ref{Vault: "t"}}, "u.token: a token applies to url upstreams only"},
		{"oauth", upconfig.Config{ID: "a", URL: "https://x.invalid/mcp", Auth: "oauth", Token: &vault.Ref{Vault: "t"}}, "u.token: with auth: oauth, the Authorization header is each caller's token"},
	} {
		errs := errors.Join(c.cfg.Validate("u")...)
		switch {
		case c.want == "" && errs != nil:
			t.Errorf("%s: %v", c.name, errs)
		case c.want != "" && (errs == nil || !strings.Contains(errs.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, errs, c.want)
		}
	}
}

func TestResolveHeaders(t *testing.T) {
	values := map[string]string{"env:TOKEN": "t0k", "vault:key": "k3y", "vault:nl": "a\nb"}
	var tenants []string
	resolve := func(_ context.Context, tenant string, ref vault.Ref) (string, error) {
		tenants = append(tenants, tenant)
		if v, ok := values[ref.String()]; ok {
			return v, nil
		}
		return "", vault.ErrNotFound
	}
	cfg := upconfig.Config{ID: "a", Tenant: "acme", Token: &vault.Ref{Env: "TOKEN"}, Headers: map[string]vault.Ref{"X-API-Key": {Vault: "key"}}}
	h, err := cfg.ResolveHeaders(context.Background(), resolve)
	if err != nil || h.Get("Authorization") != "Bearer t0k" || h.Get("X-Api-Key") != "k3y" || len(h) != 2 {
		t.Fatalf("headers %v, %v", h, err)
	}
	if strings.Join(tenants, ",") != "acme,acme" {
		t.Errorf("resolved for tenants %v, want the upstream's", tenants)
	}
	cfg.Token = &vault.Ref{Vault: "gone"}
	_, err = cfg.ResolveHeaders(context.Background(), resolve)
	if !errors.Is(err, upconfig.ErrCredential) || !errors.Is(err, vault.ErrNotFound) || !strings.Contains(err.Error(), "upstream a: token (vault:gone)") {
		t.Errorf("a missing secret: %v", err)
	}
	cfg.Token = &vault.Ref{Vault: "nl"}
	_, err = cfg.ResolveHeaders(context.Background(), resolve)
	if err == nil || strings.Contains(err.Error(), "a\nb") || !strings.Contains(err.Error(), "line break") {
		t.Errorf("a value with a line break: %v", err)
	}
}
