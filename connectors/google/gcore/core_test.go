package gcore_test

import (
	"strings"
	"testing"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/google/gcore"
	"github.com/legate-mcp/legate/connectors/saas"
)

func TestNeeded(t *testing.T) {
	read := gcore.Need{Tool: "read", Scopes: []string{"drive.readonly", "drive"}}
	meta := gcore.Need{Tool: "list", Scopes: []string{"drive.metadata.readonly", "drive.readonly", "drive"}}
	share := gcore.Need{Tool: "share", Scopes: []string{"drive"}}
	sheet := gcore.Need{Tool: "append", Scopes: []string{"spreadsheets", "drive"}}
	for name, tc := range map[string]struct {
		needs []gcore.Need
		want  string
	}{
		"reads":              {[]gcore.Need{meta, read}, "drive.readonly"},
		"a write serves all": {[]gcore.Need{meta, read, share}, "drive"},
		"two services":       {[]gcore.Need{meta, sheet}, "spreadsheets drive.metadata.readonly"},
		"none":               {nil, ""},
	} {
		t.Run(name, func(t *testing.T) {
			got := strings.ReplaceAll(strings.Join(gcore.Needed(tc.needs), " "), gcore.ScopePrefix, "")
			if got != tc.want {
				t.Fatalf("%q; want %q", got, tc.want)
			}
		})
	}
}

func TestEndpoint(t *testing.T) {
	c := gcore.New(connectors.Instance{ID: "google"}, saas.Options{}, gcore.Options{Endpoints: map[string]string{
		gcore.Drive: "http://d/", gcore.Calendar: "http://c/", gcore.Gmail: "http://g/", gcore.Docs: "http://x/"}})
	for service, want := range map[string]string{gcore.Drive: "http://d/drive/v3/", gcore.Calendar: "http://c/calendar/v3/", gcore.Gmail: "http://g/", gcore.Docs: "http://x/"} {
		if got := c.Endpoint(service); got != want {
			t.Errorf("%s: %s; want %s", service, got, want)
		}
	}
}
