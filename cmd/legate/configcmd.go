package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store/sqlite"
)

func configCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Check the configuration"}
	cmd.AddCommand(&cobra.Command{
		Use:   "validate",
		Short: "Validate the config file and every connector instance (no I/O to providers)",
		Long: "Validate the config file and every connector instance, with the stored ones when the state\n" +
			"directory holds a database (it is not created). Every error names its key path.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			opts := server.Options{Config: cfg}
			if dir, err := g.resolveStateDir(cfg); err == nil {
				if _, err := os.Stat(filepath.Join(dir, sqlite.FileName)); err == nil {
					st, err := sqlite.Open(ctx, dir)
					if err != nil {
						return err
					}
					defer st.Close()
					opts.Store = st
				}
			}
			gw, err := server.New(ctx, opts)
			if err != nil {
				return err
			}
			defer gw.Close()
			fmt.Fprintf(cmd.OutOrStdout(), "%s: valid (%d connector instances, %d tools)\n", orNone(cfg.Path), len(gw.Instances()), gw.Catalog().Len())
			return nil
		},
	})
	return cmd
}
