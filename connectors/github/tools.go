package github

import (
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/github/actions"
	"github.com/legate-mcp/legate/connectors/github/pulls"
	"github.com/legate-mcp/legate/connectors/github/repos"
)

// newTools lists every tool of the type, each in its toolset.
func (c *Connector) newTools() []connectors.Tool {
	var all []connectors.Tool
	for _, set := range []struct {
		name  string
		tools []connectors.Tool
	}{
		{"issues", issues{c.Core}.tools()},
		{"pull_requests", pulls.Tools{Core: c.Core}.List()},
		{"repos", repos.Tools{Core: c.Core}.List()},
		{"search", search{c.Core}.tools()},
		{"actions", actions.Tools{Core: c.Core}.List()},
		{"notifications", notifications{c.Core}.tools()},
	} {
		for _, t := range set.tools {
			t.Toolset = set.name
			all = append(all, t)
		}
	}
	return all
}
