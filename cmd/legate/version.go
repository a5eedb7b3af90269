package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of legate and of its MCP SDK",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			sdk := "unknown"
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, d := range bi.Deps {
					if d.Path == "github.com/modelcontextprotocol/go-sdk" {
						sdk = d.Version
					}
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "legate %s (%s, go-sdk %s, %s/%s)\n", version, runtime.Version(), sdk, runtime.GOOS, runtime.GOARCH)
		},
	}
}
