package config

import (
	"fmt"
	"strings"

	"github.com/legate-mcp/legate/internal/strictyaml"
)

// KeyTable returns the Markdown table of every key of config.yaml — path,
// kind, default, description — as docs/configuration.md shows it.
func KeyTable() string {
	var b strings.Builder
	b.WriteString("| key | kind | default | description |\n|---|---|---|---|\n")
	for _, k := range Spec() {
		def := ""
		if k.Default != "" {
			def = "`" + k.Default + "`"
		}
		desc := k.Description
		if len(k.Enum) > 0 {
			desc += " (one of: " + strings.Join(k.Enum, ", ") + ")"
		}
		if k.Required {
			desc = "**Required.** " + desc
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Path, strictyaml.Kind(k.Type), def, escapeCell(desc))
	}
	return b.String()
}

// escapeCell keeps a description from ending its table cell.
func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
