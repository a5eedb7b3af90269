// Package typescmd is `legate connector types`: the registered connector
// types with their config fields and credentials, and one type in detail
// with the tools an instance of it offers.
package typescmd

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
	"github.com/legate-mcp/legate/connectors"
)

// New returns `legate connector types [TYPE]`.
func New() *cobra.Command {
	var out *cli.Flag
	cmd := &cobra.Command{
		Use:   "types [TYPE]",
		Short: "List the registered connector types with their config fields and credentials, or show one with its tools",
		Long: "List the registered connector types with their config fields and credentials. With TYPE, show that\n" +
			"one: its description, config fields (kind, default, description), credentials, and the tools an\n" +
			"instance with the default config offers, with their classes.",
		Example: "  legate connector types\n  legate connector types postgres\n  legate connector types postgres -o json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if len(argv) == 1 {
				t, ok := connectors.Lookup(argv[0])
				if !ok {
					return fmt.Errorf("unknown connector type %q (known: %s)", argv[0], strings.Join(connectors.TypeNames(), ", "))
				}
				d := typeDetail{typeInfo: infoOf(t), Tools: toolsOf(t)}
				return out.Print(cmd, d, "", func(w io.Writer) error { return printType(w, d) })
			}
			var types []typeInfo
			for _, t := range connectors.Types() {
				types = append(types, infoOf(t))
			}
			return out.Print(cmd, types, "no connector types in this build", func(w io.Writer) error {
				for _, t := range types {
					fmt.Fprintf(w, "%s — %s\n", t.Name, t.Description)
					printSpec(w, t)
					fmt.Fprintln(w)
				}
				return nil
			})
		},
	}
	out = cli.Add(cmd, cli.JSON)
	return cmd
}

// typeInfo is a connector type as connector types lists it.
type typeInfo struct {
	Name        string                  `json:"name"`
	Description string                  `json:"description"`
	Fields      []connectors.Field      `json:"fields"`
	Credentials []connectors.Credential `json:"credentials"`
}

// typeDetail is one connector type as connector types TYPE shows it.
type typeDetail struct {
	typeInfo
	// Tools are those of an instance with the default config (some types
	// offer more, or fewer, by their config: read_only, for one), and,
	// for a type whose tools fall into toolsets, every other tool too.
	Tools []typeTool `json:"tools"`
}

// typeTool is one tool of a type, by its name within an instance.
type typeTool struct {
	Name        string       `json:"name"`
	Class       legate.Class `json:"class"`
	ByArguments bool         `json:"class_by_arguments,omitempty"` // each call's class follows from its arguments; Class is that of arguments it cannot read
	Description string       `json:"description"`
	Toolset     string       `json:"toolset,omitempty"` // the group the config's toolsets selects it by
	// Default says an instance with the default config offers it.
	Default bool `json:"default"`
}

func infoOf(t connectors.Type) typeInfo {
	ti := typeInfo{Name: t.Name, Description: t.Description, Fields: []connectors.Field{}, Credentials: t.Credentials}
	if t.Config != nil {
		if f, err := connectors.FieldsOf(t.Config()); err == nil {
			ti.Fields = f
		}
	}
	if ti.Credentials == nil {
		ti.Credentials = []connectors.Credential{}
	}
	return ti
}

// toolsOf lists the tools of an instance of t with the default config,
// built without I/O and closed again; none when t cannot build one so.
func toolsOf(t connectors.Type) []typeTool {
	out := []typeTool{}
	if t.New == nil {
		return out
	}
	cfg, _ := connectors.DecodeConfig(t, nil, "") // required keys left unset are no matter to the tool list
	c, err := t.New(connectors.Instance{ID: t.Name, Config: cfg})
	if err != nil || c == nil {
		return out
	}
	if cl, ok := c.(connectors.Closer); ok {
		defer cl.Close()
	}
	offered := map[string]bool{}
	all := c.Tools()
	for _, tool := range all {
		offered[tool.Name] = true
	}
	if tc, ok := c.(connectors.ToolCatalog); ok {
		all = tc.ToolCatalog()
	}
	for _, tool := range all {
		out = append(out, typeTool{Name: tool.Name, Class: tool.Class, ByArguments: tool.ClassFor != nil, Description: tool.Description,
			Toolset: tool.Toolset, Default: offered[tool.Name]})
	}
	return out
}

// printSpec writes a type's config fields and credentials as a table.
func printSpec(w io.Writer, t typeInfo) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, f := range t.Fields {
		attrs := f.Kind
		if f.Required {
			attrs += ", required"
		}
		if f.Default != "" {
			attrs += ", default " + f.Default
		}
		fmt.Fprintf(tw, "  config.%s\t%s\t%s\n", f.Name, attrs, f.Description)
	}
	for _, c := range t.Credentials {
		attrs := "secret"
		if c.Required {
			attrs += ", required"
		}
		fmt.Fprintf(tw, "  credentials.%s\t%s\t%s\n", c.Name, attrs, c.Description)
	}
	tw.Flush()
}

// printType writes one type for people: description, spec, then tools.
func printType(w io.Writer, d typeDetail) error {
	fmt.Fprintf(w, "%s — %s\n\n", d.Name, d.Description)
	if len(d.Fields)+len(d.Credentials) == 0 {
		fmt.Fprintln(w, "  no config fields and no credentials")
	}
	printSpec(w, d.typeInfo)
	fmt.Fprintln(w)
	if len(d.Tools) == 0 {
		fmt.Fprintln(w, "tools: none known without a config")
		return nil
	}
	fmt.Fprintf(w, "tools (named <id>.<tool>; * offered with the default config, the others by the config's toolsets):\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, t := range d.Tools {
		class := string(t.Class)
		if t.ByArguments {
			class = "by arguments, else " + class
		}
		mark := " "
		if t.Default {
			mark = "*"
		}
		fmt.Fprintf(tw, "  %s %s\t%s\t%s\t%s\n", mark, t.Name, class, t.Toolset, cli.OneLine(t.Description, 100))
	}
	return tw.Flush()
}
