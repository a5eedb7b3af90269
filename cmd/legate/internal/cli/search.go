package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/profiles"
	"github.com/legate-mcp/legate/server"
)

// SearchCommand is `legate tools search QUERY`: the tools of the catalog
// that best match a task worded in plain words, as legate.search_tools
// ranks them. withGateway runs its body with a gateway built from the
// configuration and the store.
func SearchCommand(withGateway func(func(*cobra.Command, []string, *server.Gateway) error) func(*cobra.Command, []string) error) *cobra.Command {
	var in profiles.SearchArgs
	var out *Flag
	cmd := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Find tools by what they do: ranks name, description and parameters against the query",
		Args:  cobra.MinimumNArgs(1),
		RunE: withGateway(func(cmd *cobra.Command, argv []string, gw *server.Gateway) error {
			in.Query = strings.Join(argv, " ")
			found, err := profiles.Search(gw.Catalog(), &in)
			if err != nil {
				return err
			}
			return out.Print(cmd, found, "no tool matches; legate tools list shows them all", func(w io.Writer) error {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tCANONICAL\tCLASS\tDESCRIPTION")
				for _, f := range found {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Name, f.Canonical, f.Class, OneLine(f.Description, 80))
				}
				return tw.Flush()
			})
		}),
	}
	cmd.Flags().StringVar(&in.Connector, "connector", "", "only tools of this connector instance or upstream id")
	cmd.Flags().StringVar(&in.Class, "class", "", "only tools of this class: read, draft, write or destructive")
	cmd.Flags().IntVar(&in.Limit, "limit", 10, "how many tools at most (at most 20)")
	out = Add(cmd, "")
	return cmd
}
