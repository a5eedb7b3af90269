package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store/sqlite"
)

func configCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Check the configuration"}
	cmd.AddCommand(&cobra.Command{
		Use:   "validate",
		Short: "Validate the config file and every connector instance (no I/O to providers)",
		Long: "Validate the config file and every connector instance, with the stored ones when the state\n" +
			"directory holds a database (it is not created). Every error names its key path. Warnings (on\n" +
			"stderr) name what is valid but will fail here: unset credential or header variables, missing\n" +
			"secret files, policy rules matching no tool.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			// The stored instances count when there is a database; none is created.
			open := sqlite.OpenMemory
			if dir, err := g.resolveStateDir(cfg); err == nil {
				if _, err := os.Stat(filepath.Join(dir, sqlite.FileName)); err == nil {
					open = func(ctx context.Context) (*sqlite.Store, error) { return sqlite.Open(ctx, dir) }
				}
			}
			st, err := open(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			gw, err := server.New(ctx, server.Options{Config: cfg, Store: st})
			if err != nil {
				return err
			}
			defer gw.Close()
			for _, w := range configWarnings(cfg, gw.Catalog()) {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: valid (%s, %s)\n", orNone(cfg.Path), cli.Plural(len(gw.Instances()), "connector instance"), cli.Plural(gw.Catalog().Len(), "tool"))
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of config.yaml",
		Long: "Print the JSON Schema (draft 2020-12) of config.yaml, made from the same spec the loader uses.\n" +
			"Save it beside the file and name it on the file's first line for editors to check and complete it:\n" +
			"  # yaml-language-server: $schema=legate.schema.json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := json.MarshalIndent(config.Schema(), "", "  ")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b)
			return err
		},
	})
	return cmd
}
