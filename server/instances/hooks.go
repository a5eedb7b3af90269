package instances

import (
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/hooks"
)

// Hook is the instance as package hooks sees it: the credentials it
// resolves are its own tenant's, there being no caller.
func (in *Instance) Hook() hooks.Instance {
	c := in.Creds
	c.Tenant = in.Def.Tenant
	return hooks.Instance{ID: in.Def.ID, Type: in.Def.Type, Tenant: in.Def.Tenant, Credentials: c}
}

// Hook finds the instance id, as package hooks sees it.
func (s Set) Hook(id string) (hooks.Instance, bool) {
	for _, in := range s {
		if in.Def.ID == id {
			return in.Hook(), true
		}
	}
	return hooks.Instance{}, false
}

// HookTools are the tools h adds to an instance (its events_list), for
// Entries.
func HookTools(h *hooks.Hooks) func(*Instance) []connectors.Tool {
	return func(in *Instance) []connectors.Tool { return h.Tools(in.Hook()) }
}
