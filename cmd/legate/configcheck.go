package main

import (
	"fmt"
	"maps"
	"os"
	"path"
	"slices"

	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/vault"
)

// configWarnings are what `config validate` cannot hold against a file
// that is valid, but that will fail or do nothing when it serves: a
// credential or header variable not set in this environment, a secret
// file missing, a policy rule that matches no tool the catalog holds.
// Each names its key path and the reference, never a value.
func configWarnings(cfg *config.File, cat *catalog.Catalog) []string {
	var out []string
	if w := cfg.PerUserUnhardened(); w != "" {
		out = append(out, w)
	}
	// unreadable warns of the references of refs (by key path) that cannot be
	// read here; fails says what then fails.
	unreadable := func(refs map[string]vault.Ref, fails string) {
		for _, at := range slices.Sorted(maps.Keys(refs)) {
			ref := refs[at]
			switch {
			case ref.Env != "" && os.Getenv(ref.Env) == "":
				out = append(out, fmt.Sprintf("%s: environment variable %s is not set here: %s", at, ref.Env, fails))
			case ref.File != "":
				if _, err := os.Stat(ref.File); err != nil {
					out = append(out, fmt.Sprintf("%s: secret file %s cannot be read here: %v", at, ref.File, err))
				}
			}
		}
	}
	for i, c := range cfg.Connectors {
		byPath := map[string]vault.Ref{}
		for name, ref := range c.Credentials {
			byPath[fmt.Sprintf("connectors[%d].credentials.%s", i, name)] = ref
		}
		for set, creds := range c.CredentialSets {
			for name, ref := range creds {
				byPath[fmt.Sprintf("connectors[%d].credential_sets.%s.%s", i, set, name)] = ref
			}
		}
		unreadable(byPath, "calls will fail with AUTH_EXPIRED")
	}
	for i, u := range cfg.Upstreams {
		byPath := map[string]vault.Ref{}
		if u.Token != nil {
			byPath[fmt.Sprintf("upstreams[%d].token", i)] = *u.Token
		}
		for h, ref := range u.Headers {
			byPath[fmt.Sprintf("upstreams[%d].headers.%s", i, h)] = ref
		}
		unreadable(byPath, "upstream "+u.ID+" will not connect")
		for _, h := range slices.Sorted(maps.Keys(u.HeaderEnv)) {
			if v := u.HeaderEnv[h]; os.Getenv(v) == "" {
				out = append(out, fmt.Sprintf("upstreams[%d].header_env.%s: environment variable %s is not set here: upstream %s will not connect", i, h, v, u.ID))
			}
		}
	}
	for i, r := range cfg.Policy.Rules {
		if r.Tool != "" && !slices.ContainsFunc(cat.Entries(), func(e *catalog.Entry) bool {
			ok, _ := path.Match(r.Tool, e.Canonical)
			return ok
		}) {
			out = append(out, fmt.Sprintf("policy.rules[%d].tool: %q matches no tool in the catalog (an upstream's tools count once it has been listed: legate upstream refresh)", i, r.Tool))
		}
	}
	return out
}
