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
// it does not exclude, and unsaid apps are off; at a profile's URL its
// options win over the caller's own profile's.
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
		{&auth.Principal{Name: "a", Profile: "all", Narrow: "one"}, "notion", true, "team"},
		{&auth.Principal{Name: "a", Profile: "apps"}, "slack", true, ""},
		// one says nothing of slack's apps: its caller's own profile does.
		{&auth.Principal{Name: "a", Profile: "apps", Narrow: "one"}, "slack", true, ""},
		// apps names notion, without a set: its entry wins whole.
		{&auth.Principal{Name: "a", Profile: "one", Narrow: "apps"}, "notion", false, ""},
		{nil, "notion", false, ""},
	} {
		if got := d.AllowsMCPUI(c.p, c.id); got != c.allow {
			t.Errorf("%+v, %s: AllowsMCPUI %v, want %v", c.p, c.id, got, c.allow)
		}
		if got := d.CredentialsName(c.p, c.id); got != c.set {
			t.Errorf("%+v, %s: CredentialsName %q, want %q", c.p, c.id, got, c.set)
		}
	}
}
