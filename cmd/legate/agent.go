package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/agent"
	"github.com/legate-mcp/legate/cmd/legate/internal/agentcmd"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/vault"
)

// agent is the agent on e: its history in the store, its model's token
// read through the vault; its server is set when the gateway is built.
func (e *env) agent() *agent.Runner {
	if e.runner == nil {
		res := &vault.Resolver{Vault: e.vault, Masks: e.masks}
		e.runner = &agent.Runner{Runs: e.store.AgentRuns(), Approvals: e.store.Approvals(), Config: func() *config.File { return e.cfg }, Resolve: res.Resolve, Masks: e.masks, Log: e.log, Version: version}
	}
	return e.runner
}

// agentHooks lend `legate agent` the CLI's env and gateway.
func agentHooks(g *globals) agentcmd.Hooks {
	return agentcmd.Hooks{WithEnv: func(run func(*cobra.Command, []string, agentcmd.Env) error) func(*cobra.Command, []string) error {
		return g.withEnv(func(cmd *cobra.Command, argv []string, e *env) error {
			return run(cmd, argv, agentcmd.Env{Config: e.cfg, Store: e.store, Runner: e.agent(),
				Gateway: func(ctx context.Context, tools ...connectors.Builtin) (*server.Gateway, error) {
					return e.gateway(ctx, tools...)
				}})
		})
	}}
}
