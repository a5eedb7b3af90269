package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/doctor"
	"github.com/legate-mcp/legate/vault"
)

// doctorCmd prints the doctor's report, a line per check; it creates no
// state: only a store and a vault key that exist are opened.
func doctorCmd(g *globals) *cobra.Command {
	var url, token string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "doctor [--url URL]",
		Short: "Check the config, credentials, state directory, vault key and the running server; non-zero exit if a check fails",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			var opts doctor.Options
			opts.Config, opts.ConfigErr = g.loadConfig()
			cfg := opts.Config
			if cfg == nil {
				cfg = config.Default()
			}
			opts.StateDir, opts.StateDirErr = g.resolveStateDir(cfg)
			opts.Keys = vault.SourceFromEnv(os.Getenv, opts.StateDir)
			if storeURL := g.resolveStoreURL(opts.StateDir); opts.Config != nil && opts.StateDirErr == nil &&
				(!strings.HasPrefix(storeURL, "sqlite://") || exists(strings.TrimPrefix(storeURL, "sqlite://"))) {
				if e, err := g.open(ctx); err == nil {
					defer e.Close()
					opts.Store = e.store
					if opts.Keys.Env != "" || exists(opts.Keys.File) {
						opts.Vault = e.vault
					}
				}
			}
			if url == "" {
				url = g.serverURL()
			}
			opts.Server = &admin.Client{URL: url, Token: token}
			report := doctor.Run(ctx, opts)
			for _, c := range report {
				fmt.Fprintf(cmd.OutOrStdout(), "%-4s  %-11s  %s\n", c.Verdict, c.Name, c.Detail)
			}
			if n := report.Failed(); n > 0 {
				return exitError{fmt.Sprintf("%d checks failed", n)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "base URL of the running server (default http://<listen from the config>)")
	cmd.Flags().StringVar(&token, "token", os.Getenv("LEGATE_ADMIN_TOKEN"), "admin token, or with authentication on a bearer token of the admin role (default $LEGATE_ADMIN_TOKEN)")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "how long the checks may take, the server's answers included")
	return cmd
}

// exists reports whether path names a file.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
