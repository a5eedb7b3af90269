package main

import (
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/config"
)

func serveCmd(g *globals) *cobra.Command {
	var listen string
	var allowUnauthenticated bool
	cmd := &cobra.Command{
		Use:         "serve",
		Short:       "Serve MCP over Streamable HTTP at /mcp (and /healthz, /readyz)",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{ownState: "yes"},
		RunE: func(cmd *cobra.Command, argv []string) error {
			// The address is checked and bound before any state is made, so
			// a serve that cannot start leaves nothing behind.
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			if listen == "" {
				listen = cfg.Listen
			}
			if listen == "" {
				listen = config.DefaultListen
			}
			warning, err := auth.CheckListen(listen, cfg.Auth.Enabled(), cfg.Auth.AllowUnauthenticated || allowUnauthenticated)
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("listening on %s: %w", listen, err)
			}
			defer ln.Close() // closed already when served; not when the start fails
			return g.withEnv(func(cmd *cobra.Command, _ []string, e *env) error {
				ctx := cmd.Context()
				if warning != "" {
					e.log.Warn(warning)
				}
				if err := e.vault.LoadKeys(); err != nil { // a bad key fails the start, not the first call
					return err
				}
				gw, err := e.gateway(ctx)
				if err != nil {
					return err
				}
				defer gw.Close()
				gw.Start(ctx)
				defer watch(ctx, gw, e)()
				defer announce(ctx, e, gw, ln.Addr().String())()
				e.log.Info("legate serving", "mcp", "http://"+ln.Addr().String()+"/mcp", "tools", gw.Catalog().Len(),
					"config", orNone(e.cfg.Path), "state_dir", e.stateDir, "version", version)
				err = gw.ServeHTTP(ctx, ln)
				e.log.Info("legate stopped")
				return err
			})(cmd, argv)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "", "address to listen on (default from the config, else "+config.DefaultListen+")")
	cmd.Flags().BoolVar(&allowUnauthenticated, "allow-unauthenticated", false,
		"listen beyond loopback without authentication (as auth.allow_unauthenticated); anyone who reaches the port can call every tool")
	return cmd
}

func stdioCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:         "stdio",
		Short:       "Serve MCP over stdin/stdout for desktop clients (logs go to stderr)",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{ownState: "yes"},
		RunE: g.withEnv(func(cmd *cobra.Command, _ []string, e *env) error {
			ctx := cmd.Context()
			if err := e.vault.LoadKeys(); err != nil {
				return err
			}
			gw, err := e.gateway(ctx)
			if err != nil {
				return err
			}
			defer gw.Close()
			gw.Start(ctx)
			defer watch(ctx, gw, e)()
			return gw.ServeStdio(ctx)
		}),
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
