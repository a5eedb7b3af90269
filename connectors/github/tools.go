package github

import "github.com/legate-mcp/legate/connectors"

// newTools lists every tool of the type, each in its toolset.
func (c *Connector) newTools() []connectors.Tool {
	var all []connectors.Tool
	for _, set := range []struct {
		name  string
		tools []connectors.Tool
	}{
		{"issues", issues{c}.tools()},
		{"pull_requests", pulls{c}.tools()},
		{"repos", repos{c}.tools()},
	} {
		for _, t := range set.tools {
			t.Toolset = set.name
			all = append(all, t)
		}
	}
	return all
}
