// Package connectcmd is `legate connect INSTANCE` and `legate connections
// list|revoke`: a person's own connection to a connector instance whose
// credentials_mode is per_user (or per_user_or_shared), made through the
// instance's OAuth app or with a token of their own (--token). The work is the gateway's (connections); this
// package only parses and prints. Tokens are never printed.
package connectcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/cmd/legate/internal/access"
	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
	"github.com/legate-mcp/legate/connections"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
)

// Run runs a command with a gateway built from the command line's
// configuration, its store, and the principal calls are made by while
// authentication is off (the config's principal).
type Run func(run func(cmd *cobra.Command, argv []string, gw *server.Gateway, st store.Store, principal string) error) func(*cobra.Command, []string) error

// who is the person a command acts for: the principal of $LEGATE_TOKEN
// when it is set (a static token of this deployment), else --principal
// and --tenant, else the config's principal.
func who(ctx context.Context, st store.Store, flagPrincipal, flagTenant, def string) (string, string, error) {
	if tok := os.Getenv(access.TokenEnv); tok != "" {
		t, err := st.Tokens().ByHash(ctx, auth.HashToken(tok))
		switch {
		case errors.Is(err, store.ErrNotFound):
			return "", "", fmt.Errorf("%s is not a token of this deployment", access.TokenEnv)
		case err != nil:
			return "", "", err
		case !t.RevokedAt.IsZero():
			return "", "", fmt.Errorf("the token in %s (%q) is revoked", access.TokenEnv, t.Name)
		case flagPrincipal != "" && flagPrincipal != t.Name:
			return "", "", fmt.Errorf("--principal %q is not the principal of %s (%q)", flagPrincipal, access.TokenEnv, t.Name)
		}
		return t.Name, t.Tenant, nil
	}
	if flagPrincipal == "" {
		return def, flagTenant, nil
	}
	return flagPrincipal, flagTenant, nil
}

// ReadSecret reads a secret the person types or pipes in, never from
// the command line; what names it in the prompt.
type ReadSecret func(ctx context.Context, cmd *cobra.Command, what string) ([]byte, error)

// Connect returns `legate connect`.
func Connect(run Run, read ReadSecret) *cobra.Command {
	var principal, tenant string
	var timeout time.Duration
	var token bool
	cmd := &cobra.Command{
		Use:   "connect INSTANCE",
		Short: "Connect your own account to a connector instance (prints a URL to open, waits until connected)",
		Long: `Connect your own account of the provider to a connector instance whose
credentials_mode is per_user or per_user_or_shared: prints a
link to Legate's own page for it (valid 30 minutes), which says who is being
connected and, once you continue, sends your browser to the provider's
consent (authorization code flow with PKCE, run by Legate, bound to that
browser; the provider sends it back to Legate's /connect/callback, so legate
serve must be reachable there), then waits until the connection exists.

With --token, connects with a credential of your own instead (your API key
or personal access token, for an instance whose operator set
user_credential, or one with an OAuth app whose credential is an access
token): typed at a terminal without echo, else read from standard input,
never from the command line. Only your calls use it.

You are the principal of $LEGATE_TOKEN when it is set, else --principal
(default: the config's principal).`,
		Example: `  LEGATE_TOKEN=lgt_... legate connect slack
  legate connect github --principal alice --tenant acme
  printf %s "$MY_GITHUB_PAT" | LEGATE_TOKEN=lgt_... legate connect github --token`,
		Args: cobra.ExactArgs(1),
		RunE: run(func(cmd *cobra.Command, argv []string, gw *server.Gateway, st store.Store, def string) error {
			ctx := cmd.Context()
			name, ten, err := who(ctx, st, principal, tenant, def)
			if err != nil {
				return err
			}
			if token {
				v, err := read(ctx, cmd, "your token for "+argv[0])
				if err != nil {
					return err
				}
				defer clear(v)
				info, err := server.ConnectionsOf(gw).SetToken(ctx, ten, name, argv[0], string(v))
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "connected: %s for %s%s with a token of your own; only your calls use it (legate connections revoke %s forgets it)\n", info.Instance, info.Principal, tenantOf(ten), argv[0])
				return nil
			}
			start := time.Now()
			u, err := server.ConnectionsOf(gw).LinkURL(ctx, argv[0], ten, name, "")
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Open this URL in your browser to connect %s for %s%s (its page says so; continue there):\n\n  %s\n\nWaiting for the connection (up to %s)...\n", argv[0], name, tenantOf(ten), u, timeout)
			wctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			info, err := server.ConnectionsOf(gw).Wait(wctx, ten, name, argv[0], start, time.Second)
			if err != nil {
				return fmt.Errorf("%s is not connected for %s: %w", argv[0], name, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "connected: %s for %s%s\n", info.Instance, info.Principal, expiry(info))
			return nil
		}),
	}
	cmd.Flags().StringVar(&principal, "principal", "", "the principal to connect for (default: $LEGATE_TOKEN's, else the config's principal)")
	cmd.Flags().StringVar(&tenant, "tenant", "", "the principal's tenant (with --principal)")
	cmd.Flags().DurationVar(&timeout, "timeout", connections.StateTTL, "how long to wait for the consent")
	cmd.Flags().BoolVar(&token, "token", false, "connect with a token of your own (API key or personal access token) read from the terminal or standard input, instead of a consent")
	return cmd
}

// tenantOf names tenant for a sentence ("" for none).
func tenantOf(tenant string) string {
	if tenant == "" {
		return ""
	}
	return " (tenant " + tenant + ")"
}

func expiry(i connections.Info) string {
	if i.Expiry.IsZero() {
		return ""
	}
	return ", access token valid until " + i.Expiry.Local().Format(time.RFC3339) + " (refreshed before)"
}

// Connections returns `legate connections`.
func Connections(run Run) *cobra.Command {
	cmd := &cobra.Command{Use: "connections", Short: "People's own connections to connector instances (never their tokens)"}
	var f struct {
		tenant, principal, instance string
		out                         *cli.Flag
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List connections: instance, principal, tenant, status (connected or expired), kind (oauth or token), expiry",
		Args:  cobra.NoArgs,
		RunE: run(func(cmd *cobra.Command, _ []string, gw *server.Gateway, _ store.Store, _ string) error {
			filter := connections.Filter{Principal: f.principal, Instance: f.instance}
			if cmd.Flags().Changed("tenant") {
				filter.Tenant = &f.tenant
			}
			infos, err := server.ConnectionsOf(gw).List(cmd.Context(), filter)
			if err != nil {
				return err
			}
			return f.out.Print(cmd, infos, "no connections (people connect with legate connect INSTANCE)", func(out io.Writer) error {
				w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "INSTANCE\tPRINCIPAL\tTENANT\tSTATUS\tKIND\tEXPIRY\tCONNECTED")
				for _, i := range infos {
					exp := "-"
					if !i.Expiry.IsZero() {
						exp = cli.LocalTime(i.Expiry)
					}
					kind := "oauth"
					if i.Kind != "" {
						kind = i.Kind
					}
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i.Instance, i.Principal, cli.OrDash(i.Tenant), i.Status, kind, exp, cli.LocalTime(i.ConnectedAt))
				}
				return w.Flush()
			})
		}),
	}
	list.Flags().StringVar(&f.tenant, "tenant", "", "only this tenant's (\"\" for principals without one)")
	list.Flags().StringVar(&f.principal, "principal", "", "only this principal's")
	list.Flags().StringVar(&f.instance, "instance", "", "only this instance's")
	f.out = cli.Add(list, "")
	var rp, rt string
	revoke := &cobra.Command{
		Use:   "revoke INSTANCE --principal P [--tenant T]",
		Short: "Revoke a connection: its tokens are revoked at the provider (when it has a revoke_url) and forgotten",
		Args:  cobra.ExactArgs(1),
		RunE: run(func(cmd *cobra.Command, argv []string, gw *server.Gateway, st store.Store, def string) error {
			name, ten, err := who(cmd.Context(), st, rp, rt, def)
			if err != nil {
				return err
			}
			if err := server.ConnectionsOf(gw).Revoke(cmd.Context(), ten, name, argv[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked the connection of %s to %s\n", name, argv[0])
			return nil
		}),
	}
	revoke.Flags().StringVar(&rp, "principal", "", "whose connection (default: $LEGATE_TOKEN's, else the config's principal)")
	revoke.Flags().StringVar(&rt, "tenant", "", "the principal's tenant (with --principal)")
	cmd.AddCommand(list, revoke)
	return cmd
}
