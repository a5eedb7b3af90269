package profiles_test

import (
	"testing"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/profiles"
)

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// allow_mcp_ui: a named entry's setting wins, an all entry's covers what
// it does not exclude, and unsaid the profile's own setting holds; at a
// profile's URL both profiles must show an upstream's apps (narrowing
// never widens), while its credentials_name wins over the caller's own
// profile's.
func TestAllowMCPUI(t *testing.T) {
	ps := []config.Profile{
		{Name: "all"},
		{Name: "apps", Connectors: []config.ConnectorSelection{{All: true, Exclude: []string{"jira"}, AllowMCPUI: yes()}, {Name: "Notion", AllowMCPUI: no()}}},
		{Name: "one", Connectors: []config.ConnectorSelection{{All: true}, {Name: "notion", AllowMCPUI: yes(), CredentialsName: "team"}}},
	}
	for _, c := range []struct {
		prof, id    string
		allow, said bool
	}{
		{"all", "notion", false, false},
		{"apps", "slack", true, true},
		{"apps", "jira", false, false},
		{"apps", "notion", false, true},
		{"one", "notion", true, true},
		{"one", "slack", false, false},
	} {
		i := map[string]int{"all": 0, "apps": 1, "one": 2}[c.prof]
		if allow, said := profiles.AllowsMCPUI(ps[i], c.id); allow != c.allow || said != c.said {
			t.Errorf("%s, %s: %v %v, want %v %v", c.prof, c.id, allow, said, c.allow, c.said)
		}
	}
	d := &profiles.Discovery{Default: func() string { return "" }, Profile: func(name string) (config.Profile, bool) {
		for _, p := range ps {
			if p.Name == name {
				return p, true
			}
		}
		return config.Profile{}, name == ""
	}}
	for _, c := range []struct {
		p     *auth.Principal
		id    string
		allow bool
		set   string
	}{
		{&auth.Principal{Name: "a", Profile: "all"}, "notion", false, ""},
		// one shows notion's apps, all does not: narrowing never widens.
		{&auth.Principal{Name: "a", Profile: "all", Narrow: "one"}, "notion", false, "team"},
		{&auth.Principal{Name: "a", Profile: "apps"}, "slack", true, ""},
		// one says nothing of slack's apps and is off by itself.
		{&auth.Principal{Name: "a", Profile: "apps", Narrow: "one"}, "slack", false, ""},
		// apps names notion, without a set: its entry wins whole.
		{&auth.Principal{Name: "a", Profile: "one", Narrow: "apps"}, "notion", false, ""},
		// No principal: the whole catalog, each upstream deciding.
		{nil, "notion", true, ""},
	} {
		if got := d.AppsAllowed(c.p)(c.id); got != c.allow {
			t.Errorf("%+v, %s: AppsAllowed %v, want %v", c.p, c.id, got, c.allow)
		}
		if got := d.CredentialsName(c.p, c.id); got != c.set {
			t.Errorf("%+v, %s: CredentialsName %q, want %q", c.p, c.id, got, c.set)
		}
	}
}
