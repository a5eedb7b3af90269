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
	for i, c := range cfg.Connectors {
		refs := map[string]vault.Ref{} // by key path
		for name, ref := range c.Credentials {
			refs[fmt.Sprintf("connectors[%d].credentials.%s", i, name)] = ref
		}
		for set, creds := range c.CredentialSets {
			for name, ref := range creds {
				refs[fmt.Sprintf("connectors[%d].credential_sets.%s.%s", i, set, name)] = ref
			}
		}
		for _, at := range slices.Sorted(maps.Keys(refs)) {
			ref := refs[at]
			switch {
			case ref.Env != "" && os.Getenv(ref.Env) == "":
				out = append(out, fmt.Sprintf("%s: environment variable %s is not set here: calls will fail with AUTH_EXPIRED", at, ref.Env))
			case ref.File != "":
				if _, err := os.Stat(ref.File); err != nil {
					out = append(out, fmt.Sprintf("%s: secret file %s cannot be read here: %v", at, ref.File, err))
				}
			}
		}
	}
	for i, u := range cfg.Upstreams {
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
