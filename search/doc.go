package search

import (
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FromTool is the Doc of an MCP tool definition named name, from source:
// its title, description and the names and descriptions of its input
// schema's top-level properties. Aliases are names it also answers to.
func FromTool(name, source string, t *mcp.Tool, aliases ...string) Doc {
	d := Doc{Name: name, Source: source, Description: t.Description, Title: t.Title, Aliases: aliases}
	if d.Title == "" && t.Annotations != nil {
		d.Title = t.Annotations.Title
	}
	d.Params = schemaParams(t.InputSchema)
	return d
}

// schemaParams lists the properties of an object schema, sorted by name.
func schemaParams(schema any) []Param {
	var raw []byte
	switch s := schema.(type) {
	case nil:
		return nil
	case json.RawMessage:
		raw = s
	case []byte:
		raw = s
	default:
		raw, _ = json.Marshal(s)
	}
	var obj struct {
		Properties map[string]struct {
			Description string `json:"description"`
			Title       string `json:"title"`
		} `json:"properties"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return nil
	}
	out := make([]Param, 0, len(obj.Properties))
	for n, p := range obj.Properties {
		desc := p.Description
		if desc == "" {
			desc = p.Title
		}
		out = append(out, Param{Name: n, Description: desc})
	}
	slices.SortFunc(out, func(a, b Param) int {
		if a.Name < b.Name {
			return -1
		}
		return 1
	})
	return out
}
