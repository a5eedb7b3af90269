package profiles

import (
	"slices"
	"strings"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
)

// Per-connector options. A profile's connectors entry that names a source
// carries options of its own, as seed 003's named declarations do:
// credentials_name, which credential set of the instance the profile's
// calls use, and allow_mcp_ui, whether its callers see the source's MCP
// apps (an all entry's allow_mcp_ui covers every source it selects; a
// named entry's wins). A caller at a profile's URL gets the options of
// that profile's entry for a source, else those of its own profile's.

// Named is prof's connectors entry naming source id, if any.
func Named(prof config.Profile, id string) (config.ConnectorSelection, bool) {
	i := slices.IndexFunc(prof.Connectors, func(c config.ConnectorSelection) bool { return c.Name != "" && strings.EqualFold(c.Name, id) })
	if i < 0 {
		return config.ConnectorSelection{}, false
	}
	return prof.Connectors[i], true
}

// AllowsMCPUI reports whether prof shows the MCP apps of source id, and
// whether one of its entries says so: the allow_mcp_ui of the entry
// naming id, else of the first all entry that does not exclude it and
// sets it. Unsaid, apps are off.
func AllowsMCPUI(prof config.Profile, id string) (allow, said bool) {
	if e, ok := Named(prof, id); ok && e.AllowMCPUI != nil {
		return *e.AllowMCPUI, true
	}
	for _, e := range prof.Connectors {
		if e.All && e.AllowMCPUI != nil && !slices.ContainsFunc(e.Exclude, func(x string) bool { return strings.EqualFold(x, id) }) {
			return *e.AllowMCPUI, true
		}
	}
	return false, false
}

// optionProfiles are the profiles whose entries give p's options, the
// one that wins first: its URL's, then its own.
func (d *Discovery) optionProfiles(p *auth.Principal) []config.Profile {
	if p = d.WithDefault(p); p == nil {
		return nil
	}
	var out []config.Profile
	for _, name := range []string{p.Narrow, p.Profile} {
		if prof, known := d.Profile(name); known && name != "" {
			out = append(out, prof)
		}
	}
	return out
}

// CredentialsName is the credential set of instance id that p's calls
// use ("" for its credentials): the credentials_name of the entry naming
// id in the profile of p's URL, else in p's own profile.
func (d *Discovery) CredentialsName(p *auth.Principal, id string) string {
	for _, prof := range d.optionProfiles(p) {
		if e, ok := Named(prof, id); ok {
			return e.CredentialsName
		}
	}
	return ""
}
