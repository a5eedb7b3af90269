package config

import (
	"github.com/legate-mcp/legate/internal/strictyaml"
)

// ApplyDefaults sets every key the file leaves unset to its default: the
// default tags of the spec first, then the defaults that follow from other
// keys — an instance's id is its type; an upstream's transport and pool
// size follow from its source (stdio and 1 for a command, streamable and 4
// for a URL) and its max_result_bytes is the top-level one; a profile's
// tool_names is the top-level one; oauth's authorization server is its
// issuer; a budget's window is 1h, a day for writes. It is the one place defaults are applied; Validate changes
// nothing.
func (f *File) ApplyDefaults() error {
	if err := strictyaml.ApplyDefaults(f); err != nil {
		return err
	}
	for i := range f.Connectors {
		c := &f.Connectors[i]
		c.ID = c.id()
	}
	for i := range f.Upstreams {
		u := &f.Upstreams[i]
		stdio := len(u.Command) > 0
		switch {
		case u.Transport != "":
		case stdio:
			u.Transport = "stdio"
		case u.URL != "":
			u.Transport = "streamable"
		}
		if u.PoolSize == 0 {
			u.PoolSize = 4
			if stdio {
				u.PoolSize = 1
			}
		}
		if u.MaxResultBytes == 0 {
			u.MaxResultBytes = f.MaxResultBytes
		}
	}
	for i := range f.Profiles {
		if f.Profiles[i].ToolNames == "" {
			f.Profiles[i].ToolNames = f.ToolNames
		}
		if f.Profiles[i].Discovery == "" {
			f.Profiles[i].Discovery = DiscoveryList
		}
	}
	f.Budgets.applyDefaults()
	if o := f.Auth.OAuth; o != nil && len(o.AuthorizationServers) == 0 && o.Issuer != "" {
		o.AuthorizationServers = []string{o.Issuer}
	}
	return nil
}
