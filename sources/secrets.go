package sources

import (
	"context"
	"os"

	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/vault"
)

// SecretValues resolves every credential that instances and upstreams
// reference — each instance's credentials, credential sets and OAuth app
// secret, each upstream's header_env — and returns their values, to be masked
// wherever they appear. A reference that cannot be resolved now is
// skipped: the call that needs it fails, naming it, and resolves nothing
// to mask.
func SecretValues(ctx context.Context, r *vault.Resolver, instances []InstanceDef, upstreams []upstream.Def) []string {
	var values []string
	resolve := func(tenant string, ref vault.Ref) {
		if v, err := r.Resolve(ctx, tenant, ref); err == nil {
			values = append(values, v)
		}
	}
	for _, d := range instances {
		for _, ref := range d.Credentials {
			resolve(d.Tenant, ref)
		}
		for _, set := range d.CredentialSets {
			for _, ref := range set {
				resolve(d.Tenant, ref)
			}
		}
		if d.OAuth != nil && d.OAuth.ClientSecret != nil {
			resolve(d.Tenant, *d.OAuth.ClientSecret)
		}
	}
	for _, d := range upstreams {
		for _, env := range d.Config.HeaderEnv {
			values = append(values, os.Getenv(env))
		}
		for _, h := range d.Config.CredentialRefs() {
			resolve(d.Config.Tenant, h.Ref)
		}
	}
	return values
}
