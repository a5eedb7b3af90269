package stripe

import (
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
	"github.com/legate-mcp/legate/connectors/stripe/billing"
	"github.com/legate-mcp/legate/connectors/stripe/catalog"
)

// newTools lists every tool of the type, each in its toolset.
func (c *Connector) newTools() []connectors.Tool {
	var all []connectors.Tool
	for _, set := range []struct {
		name  string
		tools []connectors.Tool
	}{
		{"customers", customers{c.Core}.tools()},
		{"payments", payments{c.Core}.tools()},
		{"billing", billing.Tools{Core: c.Core}.List()},
		{"disputes", disputes{c.Core}.tools()},
		{"balance", balance{c.Core}.tools()},
		{"search", search{c.Core}.tools()},
		{"catalog", catalog.Tools{Core: c.Core}.List()},
	} {
		for _, t := range set.tools {
			t.Toolset = set.name
			all = append(all, t)
		}
	}
	return all
}

// writes ends the description of a tool that writes.
func writes(desc string) string { return desc + " " + saas.OnceNote }
