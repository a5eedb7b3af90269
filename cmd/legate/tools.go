package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/server"
)

func toolsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "tools", Short: "List and call the tools of the catalog"}
	var out *cli.Flag
	list := &cobra.Command{
		Use:   "list",
		Short: "List every tool: wire name, canonical name, class, source",
		Args:  cobra.NoArgs,
		RunE: g.withGateway(func(cmd *cobra.Command, _ []string, gw *server.Gateway) error {
			type row struct {
				Name        string       `json:"name"`
				Canonical   string       `json:"canonical"`
				Class       legate.Class `json:"class"`
				Source      string       `json:"source"`
				Description string       `json:"description"`
				InputSchema any          `json:"inputSchema"`
			}
			entries := gw.Catalog().Entries()
			rows := make([]row, len(entries))
			for i, en := range entries {
				rows[i] = row{en.Wire, en.Canonical, en.Class, en.Source, en.Tool.Description, en.Tool.InputSchema}
			}
			return out.Print(cmd, rows, "no tools in the catalog; add a connector (legate connector add) or an upstream (legate upstream add)", func(w io.Writer) error {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tCANONICAL\tCLASS\tSOURCE")
				for _, r := range rows {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Canonical, r.Class, r.Source)
				}
				return tw.Flush()
			})
		}),
	}
	out = cli.Add(list, cli.JSON)

	var args string
	call := &cobra.Command{
		Use:   "call NAME --args JSON",
		Short: "Call one tool through the same call path the server uses; prints the MCP result",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if !json.Valid([]byte(args)) {
				return fmt.Errorf("--args: not valid JSON: %s", args)
			}
			return g.withGateway(func(cmd *cobra.Command, argv []string, gw *server.Gateway) error {
				gw.StartAudit(cmd.Context())
				out, err := gw.Call(cmd.Context(), argv[0], json.RawMessage(args), server.CallOptions{Caller: connectors.Caller{Session: "cli"}})
				if errors.Is(err, server.ErrUnknownTool) {
					return fmt.Errorf("%w (legate tools list shows the catalog)", err)
				}
				if err != nil {
					return err
				}
				if err := cli.WriteJSON(cmd.OutOrStdout(), out); err != nil {
					return err
				}
				if out.IsError {
					return exitError{"tool call failed"}
				}
				return nil
			})(cmd, argv)
		},
	}
	call.Flags().StringVar(&args, "args", "{}", "arguments as a JSON object")
	cmd.AddCommand(list, call, cli.SearchCommand(g.withGateway))
	return cmd
}
