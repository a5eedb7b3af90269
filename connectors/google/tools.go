package google

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/google/calendar"
	"github.com/legate-mcp/legate/connectors/google/docs"
	"github.com/legate-mcp/legate/connectors/google/drive"
	"github.com/legate-mcp/legate/connectors/google/gcore"
	"github.com/legate-mcp/legate/connectors/google/gmail"
	"github.com/legate-mcp/legate/connectors/google/sheets"
)

// Toolsets are the type's groups of tools, one per Google service.
var Toolsets = []connectors.Toolset{
	{Name: "drive", Description: "Drive: search, list and read files, upload, share", Default: true},
	{Name: "docs", Description: "Docs: read a document as Markdown, create one, append or replace text", Default: true},
	{Name: "sheets", Description: "Sheets: tabs, read and update ranges, append rows, create a spreadsheet", Default: true},
	{Name: "gmail", Description: "Gmail: search, read messages, threads and attachments, labels; draft, send, reply, label (on request: its scopes are the mailbox)"},
	{Name: "calendar", Description: "Calendar: calendars, events in a window, free/busy; create, update, delete events, answer invitations (on request)"},
}

// service is one service's tools, as its package lists them.
type service interface {
	List() []connectors.Tool
}

// scoped is a service whose tools declare their scopes.
type scoped interface {
	Scopes() map[string][]string
}

// newTools lists every tool of the type, each in its toolset, and what
// scopes each needs.
func (c *Connector) newTools() ([]connectors.Tool, []gcore.Need) {
	var all []connectors.Tool
	var needs []gcore.Need
	for _, set := range []struct {
		name string
		svc  service
	}{
		{"drive", drive.Tools{Core: c.Core, Public: c.cfg.AllowPublicSharing}},
		{"docs", docs.Tools{Core: c.Core}},
		{"sheets", sheets.Tools{Core: c.Core}},
		{"gmail", gmail.Tools{Deps: gmail.Deps{Kit: c.Core.Kit, Client: c.clientFor, BaseURL: c.Core.Endpoint(gcore.Gmail), MapError: gcore.MapError}}},
		{"calendar", calendar.Tools{Deps: calendar.Deps{Kit: c.Core.Kit, Client: c.clientFor, BaseURL: c.Core.Endpoint(gcore.Calendar), MapError: gcore.MapError}}},
	} {
		var scopes map[string][]string
		if s, ok := set.svc.(scoped); ok {
			scopes = s.Scopes()
		}
		for _, t := range set.svc.List() {
			t.Toolset = set.name
			t.Run = withCredentials(t.Run)
			// The names of the first google tools (gsheets.read_range,
			// gdrive.list_files), and their pattern for the other tools
			// of those services (gmail and calendar came later).
			if set.name == "sheets" || set.name == "drive" || set.name == "docs" {
				t.Aliases = append(t.Aliases, "g"+set.name+"."+strings.TrimPrefix(t.Name, set.name+"_"))
			}
			all = append(all, t)
			needs = append(needs, gcore.Need{Tool: t.Name, Scopes: scopes[t.Name]})
		}
	}
	return all, needs
}

// clientFor is the HTTP client sending access, an attempt's access token,
// as the gmail and calendar packages ask for it.
func (c *Connector) clientFor(_ context.Context, access string) (*http.Client, error) {
	return c.Core.ClientFor(access), nil
}

// withCredentials has run see the call's refresh_token or
// service_account_json as the kit's one credential.
func withCredentials(run func(context.Context, *connectors.Call) (*legate.Result, error)) func(context.Context, *connectors.Call) (*legate.Result, error) {
	return func(ctx context.Context, call *connectors.Call) (*legate.Result, error) {
		c := *call
		c.Credentials = gcore.Credentials(call.Credentials)
		return run(ctx, &c)
	}
}

// needsOf are the needs of tools.
func needsOf(all []gcore.Need, tools []connectors.Tool) []gcore.Need {
	var out []gcore.Need
	for _, n := range all {
		if slices.ContainsFunc(tools, func(t connectors.Tool) bool { return t.Name == n.Tool }) {
			out = append(out, n)
		}
	}
	return out
}
