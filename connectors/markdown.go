package connectors

import (
	"cmp"
	"fmt"
	"strings"
)

// ConfigTable renders the type's config fields as the Markdown table each
// connector's README and its page in docs/connectors show.
func ConfigTable(t Type) (string, error) {
	var b strings.Builder
	b.WriteString("| field | kind | default | description |\n|---|---|---|---|\n")
	if t.Config == nil {
		return b.String(), nil
	}
	fields, err := FieldsOf(t.Config())
	if err != nil {
		return "", err
	}
	for _, f := range fields {
		def := ""
		if f.Default != "" {
			def = "`" + f.Default + "`"
		}
		desc := f.Description
		if f.Required {
			desc = "**Required.** " + desc
		}
		if f.Example != "" {
			desc += ". Example: `" + f.Example + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Name, f.Kind, def, cell(desc))
	}
	return b.String(), nil
}

// Reference renders the reference page of type t: what it is, its
// credentials (every one a secret, given as a reference), its config and
// the tools of an instance of it, c, with their classes.
func Reference(t Type, c Connector) (string, error) {
	table, err := ConfigTable(t)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# `%s`\n\n%s.\n\nThe connector's guide: [connectors/%s/README.md](../../connectors/%s/README.md).\n\n", t.Name, t.Description, t.Name, t.Name)
	if d, ok := c.(Describer); ok {
		desc := d.Describe()
		fmt.Fprintf(&b, "Adapter version %s; provider API %s.\n\n", desc.AdapterVersion, cmp.Or(desc.APIVersion, "none of its own"))
	}
	b.WriteString("## Credentials\n\nSecrets, given as references (`{env: NAME}`, `{file: PATH}`, `{vault: NAME}`) and resolved at each call; never in config.\n\n")
	if len(t.Credentials) == 0 {
		b.WriteString("None.\n\n")
	} else {
		b.WriteString("| credential | required | description |\n|---|---|---|\n")
		for _, cr := range t.Credentials {
			req := "no"
			if cr.Required {
				req = "yes"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", cr.Name, req, cell(cr.Description))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Config\n\n" + table + "\n## Tools\n\nNamed `<instance>.<tool>`; the class decides what policy does with a call and the annotations clients see.\n\n")
	tools := c.Tools()
	if tc, ok := c.(ToolCatalog); ok {
		tools = tc.ToolCatalog()
		b.WriteString("Every tool of the type; an instance offers those of the toolsets its config selects (see Toolsets below).\n\n")
	}
	b.WriteString("| tool | class | output schema | description |\n|---|---|---|---|\n")
	for _, tool := range tools {
		class := string(tool.Class)
		if tool.ClassFor != nil {
			class += " (by arguments)"
		}
		out := "no"
		if tool.OutputSchema != nil {
			out = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", tool.Name, class, out, cell(tool.Description))
	}
	if ts := toolsetsTable(tools); ts != "" {
		b.WriteString("\n" + strings.TrimSuffix(ts, "\n"))
	}
	return b.String(), nil
}

// cell makes s fit in one Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
