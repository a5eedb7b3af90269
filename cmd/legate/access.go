package main

import (
	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/cmd/legate/internal/access"
)

// accessHooks lend the token and user commands the CLI's store opening
// and secret reading.
func accessHooks(g *globals) access.Hooks {
	return access.Hooks{ReadSecret: readSecret, WithEnv: func(run access.Run) func(*cobra.Command, []string) error {
		return g.withEnv(func(cmd *cobra.Command, argv []string, e *env) error {
			return run(cmd, argv, access.Env{Store: e.store, Config: e.cfg, Ops: g.operations(e)})
		})
	}}
}
