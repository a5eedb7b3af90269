package sources_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
	_ "github.com/legate-mcp/legate/connectors/all"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
	"github.com/legate-mcp/legate/vault"
)

func TestInstanceDefsMergeFileAndStore(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.OpenMemory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg, err := config.Parse([]byte("connectors:\n  - {id: web, type: webhook, config: {url: \"https://example.com/\"}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if err := st.Connectors().Create(ctx, store.Connector{ID: "api", Type: "http", Config: []byte("base_url: https://api.example.com/\n"), CreatedAt: when}); err != nil {
		t.Fatal(err)
	}
	defs, err := sources.InstanceDefs(ctx, cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 2 || defs[0].ID != "web" || defs[0].Origin != "config connectors[0]" ||
		defs[1].ID != "api" || defs[1].Origin != "the store, added 2026-11-30 12:00" || defs[1].Config == nil {
		t.Fatalf("defs %+v", defs)
	}
	if err := st.Connectors().Create(ctx, store.Connector{ID: "web", Type: "webhook", CreatedAt: when}); err != nil {
		t.Fatal(err)
	}
	_, err = sources.InstanceDefs(ctx, cfg, st)
	if err == nil || !strings.Contains(err.Error(), `connector id "web" is defined twice: in config connectors[0] and in the store`) {
		t.Fatalf("a duplicate id: %v", err)
	}
}

func TestCredentialsWithoutAReference(t *testing.T) {
	c := sources.Credentials{}
	if c.Has("token") {
		t.Fatal("has a credential it was not given")
	}
	if _, err := c.Get(context.Background(), "token"); err == nil || !strings.Contains(err.Error(), "credential token") {
		t.Fatalf("got %v", err)
	}
}

// A reference that cannot be read is CONFIG_ERROR, not AUTH_EXPIRED (an
// operator must set it, no login is involved): the message names the
// reference and what to set or change, by the instance's key path.
func TestUnreadableCredentialIsAConfigError(t *testing.T) {
	env := func(string) (string, bool) { return "", false }
	cases := map[string]struct {
		ref  vault.Ref
		path string
		want string
	}{
		"env": {vault.Ref{Env: "GH_PAT"}, "connectors[1]",
			"credential token (env:GH_PAT) cannot be read: environment variable GH_PAT is not set or empty: secret not found; set the environment variable GH_PAT where the server runs, or change connectors[1].credentials.token"},
		"file": {vault.Ref{File: "/nonexistent/gh-pat"}, "connectors[1]",
			"write the secret to /nonexistent/gh-pat (readable by the server), or change connectors[1].credentials.token"},
		"vault, stored instance": {vault.Ref{Vault: "gh-pat"}, `stored connector "gh"`,
			`set the secret with legate vault set gh-pat, or change the credential token of the stored connector "gh"`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			creds := sources.Credentials{Refs: map[string]vault.Ref{"token": c.ref}, Resolver: &vault.Resolver{LookupEnv: env}, Path: c.path}
			_, err := creds.Get(t.Context(), "token")
			if legate.CodeOf(err) != legate.CodeConfigError || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v; want CONFIG_ERROR with %q", err, c.want)
			}
		})
	}
}

// A stored instance's credentials mode and OAuth app get the defaults and
// checks of a config file's instance.
func TestStoredDefAccess(t *testing.T) {
	def, err := sources.StoredDef(store.Connector{ID: "gh", Type: "github",
		Access: []byte(`{"credentials_mode":"per_user","oauth":{"client_id":"app","client_secret":{"vault":"gh.oauth.client_secret"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := config.Providers["github"]
	if def.Mode != config.CredentialsPerUser || def.OAuth == nil || def.OAuth.AuthorizeURL != want.AuthorizeURL || def.OAuth.TokenURL != want.TokenURL ||
		def.PerUserCredential() != "token" || def.OAuth.ClientSecret.Vault != "gh.oauth.client_secret" {
		t.Fatalf("per_user github: mode %q, oauth %+v", def.Mode, def.OAuth)
	}
	if _, err := def.Build(); err != nil {
		t.Fatalf("a per_user instance without a shared token does not build: %v", err)
	}
	if def, err := sources.StoredDef(store.Connector{ID: "web", Type: "http"}); err != nil || def.Mode != config.CredentialsShared || def.PerUserCredential() != "" {
		t.Fatalf("without access: %q %v", def.Mode, err)
	}
	for access, want := range map[string]string{
		`{"credentials_mode":"per_user"}`:                                                 `.oauth: is required with credentials_mode per_user`,
		`{"credentials_mode":"mine","oauth":{"client_id":"app"}}`:                         `.credentials_mode`,
		`{"credentials_mode":"per_user","oauth":{}}`:                                      `.oauth.client_id`,
		`{"credentials_mode":"per_user","oauth":{"client_id":"a","token_url":"ftp://x"}}`: `.oauth.token_url: "ftp://x" is not an http(s) URL`,
		`{"oauth":{"client_id":"a","client_secret":"plain"}}`:                             `access`,
	} {
		if _, err := sources.StoredDef(store.Connector{ID: "gh", Type: "github", Access: []byte(access)}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %s", access, err, want)
		}
	}
}

// The origin of a stored instance or upstream has no parentheses of its
// own: it is shown inside some ("connector "api" (ORIGIN)").
func TestStoredOriginsNestNoParentheses(t *testing.T) {
	when := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	def, err := sources.StoredDef(store.Connector{ID: "api", Type: "http", CreatedAt: when})
	if err != nil {
		t.Fatal(err)
	}
	up, err := sources.StoredUpstream(store.Upstream{ID: "wiki", Definition: []byte(`{"id": "wiki", "url": "http://127.0.0.1:1/mcp"}`), CreatedAt: when})
	if err != nil {
		t.Fatal(err)
	}
	for _, origin := range []string{def.Origin, up.Origin} {
		if origin != "the store, added 2026-11-30 12:00" {
			t.Errorf("origin %q", origin)
		}
	}
}

// A profile's credentials_name picks a credential set of the instance:
// its references are read before the instance's, the others stay the
// instance's, and a set the instance has not is CONFIG_ERROR naming it.
func TestCredentialsPickingASet(t *testing.T) {
	env := func(name string) (string, bool) {
		v, ok := map[string]string{"BASE_TOKEN": "base", "BASE_ID": "id", "TEAM_TOKEN": "team"}[name]
		return v, ok
	}
	def := sources.InstanceDef{ID: "notion", CredentialSets: map[string]map[string]vault.Ref{"team": {"token": {Env: "TEAM_TOKEN"}, "extra": {Env: "UNSET"}}}}
	base := sources.Credentials{Refs: map[string]vault.Ref{"token": {Env: "BASE_TOKEN"}, "id": {Env: "BASE_ID"}}, Resolver: &vault.Resolver{LookupEnv: env}, Path: "connectors[0]"}
	for set, want := range map[string]map[string]string{"": {"token": "base", "id": "id"}, "team": {"token": "team", "id": "id"}} {
		c := base.Picking(def, set)
		for name, v := range want {
			if got, err := c.Get(t.Context(), name); err != nil || got != v {
				t.Errorf("set %q: %s = %q %v, want %q", set, name, got, err, v)
			}
		}
	}
	team := base.Picking(def, "team")
	if !team.Has("extra") || base.Has("extra") {
		t.Errorf("Has(extra): with the set %v, without %v", team.Has("extra"), base.Has("extra"))
	}
	if _, err := team.Get(t.Context(), "extra"); legate.CodeOf(err) != legate.CodeConfigError || !strings.Contains(err.Error(), "connectors[0].credential_sets.team.extra") {
		t.Errorf("an unreadable reference of the set: %v, want CONFIG_ERROR naming its key path", err)
	}
	if _, err := base.Picking(def, "ops").Get(t.Context(), "token"); legate.CodeOf(err) != legate.CodeConfigError || !strings.Contains(err.Error(), `credential set "ops"`) {
		t.Errorf("a set the instance has not: %v, want CONFIG_ERROR naming it", err)
	}
}
