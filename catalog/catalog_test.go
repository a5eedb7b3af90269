package catalog_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/catalog"
)

var safeName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func entry(canonical, source string) *catalog.Entry {
	return &catalog.Entry{Canonical: canonical, Source: source, Class: legate.ClassRead,
		Tool: &mcp.Tool{Name: canonical, InputSchema: map[string]any{"type": "object"}}}
}

func TestWireNames(t *testing.T) {
	long := "mcp.some-upstream." + strings.Repeat("very_long_tool_name_", 5)
	tests := map[string]struct {
		canonical string
		naming    catalog.Naming
		want      string // "" means: only check the safe pattern
	}{
		"dots become double underscores": {"web.call", catalog.Safe, "web__call"},
		"upstream namespace":             {"mcp.github.get_issue", catalog.Safe, "mcp__github__get_issue"},
		"canonical kept":                 {"web.call", catalog.Canonical, "web.call"},
		"long name shortened":            {long, catalog.Safe, ""},
		"odd characters":                 {"mcp.x.tool/with space", catalog.Safe, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := catalog.WireName(tc.canonical, tc.naming)
			if tc.want != "" && got != tc.want {
				t.Fatalf("WireName(%q) = %q, want %q", tc.canonical, got, tc.want)
			}
			if tc.naming == catalog.Safe && !safeName.MatchString(got) {
				t.Fatalf("WireName(%q) = %q, not a safe name", tc.canonical, got)
			}
			if again := catalog.WireName(tc.canonical, tc.naming); again != got {
				t.Fatalf("not deterministic: %q then %q", got, again)
			}
		})
	}
}

func TestLongNamesStayUniqueAndRoundTrip(t *testing.T) {
	prefix := "mcp.upstream." + strings.Repeat("x", 70)
	a, b := entry(prefix+"_alpha", "upstream a"), entry(prefix+"_beta", "upstream b")
	c, err := catalog.Build(catalog.Safe, []*catalog.Entry{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if a.Wire == b.Wire {
		t.Fatalf("two long names share the wire name %q", a.Wire)
	}
	for _, e := range []*catalog.Entry{a, b} {
		if len(e.Wire) > catalog.MaxWireLen || !safeName.MatchString(e.Wire) {
			t.Errorf("wire name %q is not safe", e.Wire)
		}
		for _, name := range []string{e.Wire, e.Canonical} {
			got, ok := c.Lookup(name)
			if !ok || got != e {
				t.Errorf("Lookup(%q) = %v, want %s", name, got, e.Canonical)
			}
		}
	}
	for _, tool := range c.ListResult().Tools {
		if _, ok := c.Lookup(tool.Name); !ok {
			t.Errorf("listed tool %q does not resolve", tool.Name)
		}
	}
}

func TestWireCollisionsGetHashes(t *testing.T) {
	// "mcp.u.a.b" and "mcp.u.a__b" both map to mcp__u__a__b.
	x, y := entry("mcp.u.a.b", "upstream u (tool a.b)"), entry("mcp.u.a__b", "upstream u (tool a__b)")
	c, err := catalog.Build(catalog.Safe, []*catalog.Entry{y, x})
	if err != nil {
		t.Fatal(err)
	}
	if x.Wire == y.Wire || x.Wire == "mcp__u__a__b" || y.Wire == "mcp__u__a__b" {
		t.Fatalf("colliding names not disambiguated: %q, %q", x.Wire, y.Wire)
	}
	// Order of entries does not change the names.
	x2, y2 := entry("mcp.u.a.b", "s"), entry("mcp.u.a__b", "s")
	if _, err := catalog.Build(catalog.Safe, []*catalog.Entry{x2, y2}); err != nil {
		t.Fatal(err)
	}
	if x2.Wire != x.Wire || y2.Wire != y.Wire {
		t.Fatalf("wire names depend on order: %q/%q vs %q/%q", x.Wire, y.Wire, x2.Wire, y2.Wire)
	}
	if got, _ := c.Lookup("mcp.u.a.b"); got != x {
		t.Fatal("canonical lookup broken after disambiguation")
	}
}

func TestCanonicalCollisionNamesBothSources(t *testing.T) {
	_, err := catalog.Build(catalog.Safe, []*catalog.Entry{
		entry("slack.post_message", `connector "slack" (config.yaml connectors[0])`),
		entry("slack.post_message", `connector "slack" (the store)`),
	})
	if err == nil {
		t.Fatal("collision accepted")
	}
	for _, want := range []string{"slack.post_message", "config.yaml connectors[0]", "the store"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

// An alias finds its entry by itself and by its wire name, is never
// listed, and an alias two entries claim, or that names a listed tool,
// finds neither.
func TestAliases(t *testing.T) {
	entry := func(name string, aliases ...string) *catalog.Entry {
		return &catalog.Entry{Canonical: name, Source: name, Tool: &mcp.Tool{Name: name}, Aliases: aliases}
	}
	c, err := catalog.Build(catalog.Safe, []*catalog.Entry{
		entry("google.sheets_read_range", "gsheets.read_range", "both.x"),
		entry("work.sheets_read_range", "both.x"),
		entry("google.drive_get_file", "google.sheets_read_range", "gdrive.get_file"),
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"gsheets.read_range":       "google.sheets_read_range",
		"gsheets__read_range":      "google.sheets_read_range",
		"gdrive.get_file":          "google.drive_get_file",
		"google.sheets_read_range": "google.sheets_read_range", // the listed tool's name wins
		"both.x":                   "",
		"both__x":                  "",
	} {
		e, ok := c.Lookup(name)
		switch {
		case want == "" && ok:
			t.Errorf("%s finds %s; want nothing (two claim it)", name, e.Canonical)
		case want != "" && (!ok || e.Canonical != want):
			t.Errorf("%s finds %v; want %s", name, e, want)
		}
	}
	for _, tool := range c.ListResult().Tools {
		if strings.Contains(tool.Name, "gsheets") || strings.Contains(tool.Name, "gdrive") {
			t.Errorf("an alias is listed: %s", tool.Name)
		}
	}
	if c.Len() != 3 {
		t.Fatalf("%d entries", c.Len())
	}
}

// TestAppOnlyNotListed: an app-only tool (MCP Apps) is in the catalog, found
// by its wire and canonical names, but in no tools/list, and a catalog that
// differs only by it has another fingerprint.
func TestAppOnlyNotListed(t *testing.T) {
	shown, hidden := entry("mcp.wx.show", "upstream wx"), entry("mcp.wx.refresh", "upstream wx")
	hidden.AppOnly = true
	c, err := catalog.Build(catalog.Safe, []*catalog.Entry{shown, hidden})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mcp__wx__refresh", "mcp.wx.refresh"} {
		if e, ok := c.Lookup(name); !ok || !e.AppOnly {
			t.Errorf("Lookup(%q) = %v %t, want the app-only entry", name, e, ok)
		}
	}
	list := c.ListResult().Tools
	if len(list) != 1 || list[0].Name != "mcp__wx__show" {
		t.Errorf("tools/list %v, want mcp__wx__show alone", list)
	}
	if strings.Contains(string(c.ListJSON()), "refresh") {
		t.Errorf("ListJSON names the app-only tool: %s", c.ListJSON())
	}
	listed := entry("mcp.wx.refresh", "upstream wx")
	d, err := catalog.Build(catalog.Safe, []*catalog.Entry{entry("mcp.wx.show", "upstream wx"), listed})
	if err != nil {
		t.Fatal(err)
	}
	if c.Fingerprint() == d.Fingerprint() {
		t.Error("a catalog whose tool became app-only keeps its fingerprint")
	}
}
