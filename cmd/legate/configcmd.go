package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func configCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Check the configuration"}
	cmd.AddCommand(&cobra.Command{
		Use:   "validate",
		Short: "Validate the config file and every connector instance (no I/O to providers)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer e.Close()
			gw, err := e.gateway(cmd.Context())
			if err != nil {
				return err
			}
			defer gw.Close()
			fmt.Printf("%s: valid (%d connector instances, %d tools)\n", orNone(e.cfg.Path), len(gw.Instances()), gw.Catalog().Len())
			return nil
		},
	})
	return cmd
}
