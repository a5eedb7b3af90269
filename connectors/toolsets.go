package connectors

import (
	"fmt"
	"slices"
	"strings"

	"github.com/legate-mcp/legate"
)

// A Toolset is a named group of a connector type's tools (GitHub's
// pull_requests, Slack's search): an instance offers the toolsets its
// config's `toolsets` field names, the defaults when it names none, so
// that a team's catalog, search and approvals hold only what it uses.
type Toolset struct {
	// Name is what `toolsets` lists: [a-z][a-z0-9_]*.
	Name string
	// Description says what the group is for, in one line.
	Description string
	// Default says an instance offers the group when its config names no
	// toolsets (or names "default").
	Default bool
}

// Toolset names with a meaning of their own in a `toolsets` list.
const (
	// ToolsetsAll selects every toolset of the type.
	ToolsetsAll = "all"
	// ToolsetsDefault selects the type's default toolsets, beside any
	// others named.
	ToolsetsDefault = "default"
)

// ToolsetsDesc is the `desc` tag of a connector's `toolsets` field,
// followed by its type's toolset names.
const ToolsetsDesc = "Groups of tools the instance offers: names from the list below, `default` for the type's defaults, `all` for every tool; empty for the defaults"

// ToolCatalog is implemented by a connector whose tools fall into
// toolsets: it returns every tool of the type, each with its Toolset set,
// whatever the instance's config selects. The reference docs list them.
type ToolCatalog interface {
	ToolCatalog() []Tool
}

// SelectTools returns the tools of the toolsets chosen (a config's
// `toolsets`, with "all" and "default" understood; empty is "default"),
// in the order of tools; with readOnly, only those of class read. A tool
// with no Toolset is always offered. provider starts every error, which
// names the path `toolsets` and the known toolsets.
func SelectTools(provider string, sets []Toolset, chosen []string, readOnly bool, tools []Tool) ([]Tool, error) {
	want := map[string]bool{}
	if len(chosen) == 0 {
		chosen = []string{ToolsetsDefault}
	}
	for _, name := range chosen {
		switch name {
		case ToolsetsAll:
			for _, s := range sets {
				want[s.Name] = true
			}
		case ToolsetsDefault:
			for _, s := range sets {
				if s.Default {
					want[s.Name] = true
				}
			}
		default:
			if !slices.ContainsFunc(sets, func(s Toolset) bool { return s.Name == name }) {
				return nil, legate.Invalid("toolsets", "%s has no toolset %q; known: %s (or default, all)", provider, name, ToolsetNames(sets))
			}
			want[name] = true
		}
	}
	var out []Tool
	for _, t := range tools {
		if t.Toolset != "" && !want[t.Toolset] {
			continue
		}
		if readOnly && t.Class != legate.ClassRead {
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// ToolsetNames lists the names of sets, defaults marked: "issues*, repos".
func ToolsetNames(sets []Toolset) string {
	names := make([]string, len(sets))
	for i, s := range sets {
		names[i] = s.Name
		if s.Default {
			names[i] += " (default)"
		}
	}
	return strings.Join(names, ", ")
}

// toolsetsTable is the reference docs' table of a connector's toolsets.
func toolsetsTable(tools []Tool) string {
	var order []string
	members := map[string][]string{}
	for _, t := range tools {
		if t.Toolset == "" {
			continue
		}
		if _, ok := members[t.Toolset]; !ok {
			order = append(order, t.Toolset)
		}
		members[t.Toolset] = append(members[t.Toolset], "`"+t.Name+"`")
	}
	if len(order) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Toolsets\n\nThe config's `toolsets` selects which groups an instance offers.\n\n| toolset | tools |\n|---|---|\n")
	for _, s := range order {
		fmt.Fprintf(&b, "| `%s` | %s |\n", s, strings.Join(members[s], ", "))
	}
	return b.String() + "\n"
}
