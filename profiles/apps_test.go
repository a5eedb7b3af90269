package profiles_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/profiles"
)

// appsCatalog holds an upstream's model-visible tool with a UI and its
// app-only tool, as the gateway builds them with the upstream's apps on.
func appsCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	ui := func(vis ...any) mcp.Meta {
		return mcp.Meta{"ui": map[string]any{"resourceUri": "ui://mcp.wx/dash", "visibility": vis}, "ui/resourceUri": "ui://mcp.wx/dash"}
	}
	c, err := catalog.Build(catalog.Safe, []*catalog.Entry{
		{Canonical: "mcp.wx.show", Class: legate.ClassRead, Tool: &mcp.Tool{Meta: ui("model", "app")}},
		{Canonical: "mcp.wx.refresh", Class: legate.ClassRead, Tool: &mcp.Tool{Meta: ui("app")}, AppOnly: true},
		{Canonical: "mcp.wx.plain", Class: legate.ClassRead, Tool: &mcp.Tool{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestViewApps: a profile with allow_mcp_ui keeps the app-only tool
// (unlisted) and every _meta.ui; one without drops the app-only tool and
// every tool's _meta.ui; narrowing never shows apps the caller's own
// profile does not.
func TestViewApps(t *testing.T) {
	base := appsCatalog(t)
	on, off := true, false
	profs := map[string]config.Profile{"apps": {Name: "apps", AllowMCPUI: true}, "plain": {Name: "plain"},
		// apps per entry: the profile's own setting says no, wx's entry yes (and the reverse).
		"entry":     {Name: "entry", Connectors: []config.ConnectorSelection{{All: true}, {Name: "wx", AllowMCPUI: &on}}},
		"entry off": {Name: "entry off", AllowMCPUI: true, Connectors: []config.ConnectorSelection{{All: true}, {Name: "wx", AllowMCPUI: &off}}}}
	find := func(name string) (config.Profile, bool) { p, ok := profs[name]; return p, ok || name == "" }
	view := func(p *auth.Principal) *catalog.Catalog {
		v, err := profiles.ViewOf(context.Background(), base, find, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	hasUI := func(v *catalog.Catalog, name string) bool {
		e, ok := v.Lookup(name)
		if !ok {
			t.Fatalf("%s not in the view", name)
		}
		_, ui := e.Tool.Meta["ui"]
		_, flat := e.Tool.Meta["ui/resourceUri"]
		return ui || flat
	}

	for name, p := range map[string]*auth.Principal{
		"apps on":                         {Name: "a", Profile: "apps"},
		"no profile, narrowed to apps on": {Name: "a", Narrow: "apps"},
		"apps on for wx by its entry":     {Name: "a", Profile: "entry"},
	} {
		on := view(p)
		if e, ok := on.Lookup("mcp.wx.refresh"); !ok || !e.AppOnly {
			t.Errorf("%s: the app-only tool is not callable", name)
		}
		if len(on.ListResult().Tools) != 2 {
			t.Errorf("%s: tools/list %d tools, want 2 (the app-only one unlisted)", name, len(on.ListResult().Tools))
		}
		if !hasUI(on, "mcp.wx.show") {
			t.Errorf("%s: _meta.ui dropped", name)
		}
	}

	for name, p := range map[string]*auth.Principal{
		"apps off":                         {Name: "a", Profile: "plain"},
		"apps off, narrowed to apps on":    {Name: "a", Profile: "plain", Narrow: "apps"},
		"apps on, narrowed to apps off":    {Name: "a", Profile: "apps", Narrow: "plain"},
		"no profile, narrowed to apps off": {Name: "a", Narrow: "plain"},
		"apps off for wx by its entry":     {Name: "a", Profile: "entry off"},
	} {
		v := view(p)
		if _, ok := v.Lookup("mcp.wx.refresh"); ok {
			t.Errorf("%s: the app-only tool is in the view", name)
		}
		if hasUI(v, "mcp.wx.show") {
			t.Errorf("%s: _meta.ui shown", name)
		}
		if _, ok := v.Lookup("mcp.wx.plain"); !ok {
			t.Errorf("%s: a tool without UI is gone", name)
		}
	}
	// The base catalog itself is not changed by a view.
	if e, _ := base.Lookup("mcp.wx.show"); e.Tool.Meta["ui"] == nil {
		t.Error("building a view stripped the base catalog's _meta.ui")
	}

	d := &profiles.Discovery{Profile: find, Default: func() string { return "" }, Principal: "local"}
	for p, want := range map[*auth.Principal]bool{
		nil:                           true,
		{Name: "a", Profile: "apps"}:  true,
		{Name: "a", Profile: "plain"}: false,
		{Name: "a", Profile: "apps", Narrow: "plain"}: false,
		{Name: "a", Profile: "unknown"}:               false,
		{Name: "a", Narrow: "apps"}:                   true,
		{Name: "a", Narrow: "plain"}:                  false,
	} {
		if got := d.AppsAllowed(p)("wx"); got != want {
			t.Errorf("AppsAllowed(%+v) = %t, want %t", p, got, want)
		}
	}
}
