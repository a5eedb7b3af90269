package access

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/auth/oauth"
	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
)

// TokenCommand is `legate token`.
func TokenCommand(g Hooks) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Static bearer tokens for /mcp: create, list, revoke",
		Long: `Static bearer tokens for /mcp. Each names a principal: its name, tenant,
role (user, approver or admin) and profile. The store keeps only the
token's SHA-256 hash; the token is printed once, when it is made.

The server accepts them once auth is on in the config (auth.tokens: true,
or auth.resource / auth.oauth set).`,
	}
	cmd.AddCommand(tokenCreateCmd(g), tokenListCmd(g), tokenRevokeCmd(g))
	return cmd
}

func tokenCreateCmd(g Hooks) *cobra.Command {
	var p auth.Principal
	cmd := &cobra.Command{
		Use:     "create NAME [--tenant T] [--role R] [--profile P]",
		Short:   "Make a token for a principal and print it, the only time it is shown",
		Example: `  legate token create ci-bot --tenant acme --role user > ci-bot.token`,
		Args:    cobra.ExactArgs(1),
		RunE: g.WithEnv(func(cmd *cobra.Command, argv []string, e Env) error {
			p.Name = argv[0]
			token, err := e.Ops.CreateToken(cmd.Context(), p)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), token)
			fmt.Fprintf(cmd.ErrOrStderr(), "made token %q (role %s, tenant %s); it is shown only this once\n", p.Name, roleOrUser(p.Role), cli.OrDash(p.Tenant))
			if !e.Config.Auth.TokensEnabled() {
				fmt.Fprintln(cmd.ErrOrStderr(), "note: the config does not turn static tokens on (auth.tokens: true); until it does the server does not ask for them")
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&p.Tenant, "tenant", "", "the principal's tenant (default none)")
	cmd.Flags().StringVar(&p.Role, "role", auth.RoleUser, "user, approver or admin")
	cmd.Flags().StringVar(&p.Profile, "profile", "", "the principal's profile (default none)")
	return cmd
}

func roleOrUser(r string) string {
	if r == "" {
		return auth.RoleUser
	}
	return r
}

func tokenListCmd(g Hooks) *cobra.Command {
	var o *cli.Flag
	cmd := &cobra.Command{
		Use:   "list [-o table|json|yaml]",
		Short: "List tokens: name, tenant, role, profile, created, revoked — never the token",
		Args:  cobra.NoArgs,
		RunE: g.WithEnv(func(cmd *cobra.Command, _ []string, e Env) error {
			list, err := e.Store.Tokens().List(cmd.Context())
			if err != nil {
				return err
			}
			out := make([]TokenRow, 0, len(list))
			for _, t := range list {
				in := TokenRow{Name: t.Name, Tenant: t.Tenant, Role: t.Role, Profile: t.Profile, Created: t.CreatedAt}
				if !t.RevokedAt.IsZero() {
					in.Revoked = &t.RevokedAt
				}
				out = append(out, in)
			}
			if out, err = AppendGrants(cmd.Context(), e.Store, out); err != nil {
				return err
			}
			return o.Print(cmd, out, "no tokens; make one with `legate token create NAME`", func(w io.Writer) error {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tTENANT\tROLE\tPROFILE\tCREATED\tREVOKED")
				for _, in := range out {
					revoked := "-"
					if in.Revoked != nil {
						revoked = cli.LocalTime(*in.Revoked)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", in.Name, cli.OrDash(in.Tenant), in.Role, cli.OrDash(in.Profile), cli.LocalTime(in.Created), revoked)
				}
				return tw.Flush()
			})
		}),
	}
	o = cli.Add(cmd, cli.JSON)
	return cmd
}

func tokenRevokeCmd(g Hooks) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke NAME",
		Short: "Revoke a token, or an OAuth grant (oauth:…): the next request bearing it is refused",
		Args:  cobra.ExactArgs(1),
		RunE: g.WithEnv(func(cmd *cobra.Command, argv []string, e Env) error {
			if err := e.Ops.RevokeToken(cmd.Context(), argv[0]); err != nil {
				return err
			}
			what := "token"
			if strings.HasPrefix(argv[0], oauth.GrantPrefix) {
				what = "grant"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked %s %q\n", what, argv[0])
			return nil
		}),
	}
}
