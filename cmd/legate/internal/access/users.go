// Package access is the CLI's commands over who may call Legate:
// `legate token` (static tokens and OAuth grants) and `legate user` (the
// local accounts of Legate's own authorization server).
package access

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/auth/oauth"
	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/operations"
	"github.com/legate-mcp/legate/store"
)

// Env is what a command works on.
type Env struct {
	Store  store.Store
	Config *config.File
	// Ops are the operations over Store (operations.Standalone).
	Ops *operations.Ops
}

// Run is a command's body.
type Run func(cmd *cobra.Command, argv []string, e Env) error

// Hooks are what the commands borrow from the CLI: WithEnv opens the
// store around a Run, ReadSecret reads a password from the terminal or
// standard input.
type Hooks struct {
	WithEnv    func(Run) func(*cobra.Command, []string) error
	ReadSecret func(ctx context.Context, cmd *cobra.Command, what string) ([]byte, error)
}

// UserCommand is `legate user`.
func UserCommand(g Hooks) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user",
		Short: "Local accounts that log in to Legate's authorization server: add, list, passwd, disable",
		Long: `Local accounts of Legate's own OAuth authorization server (auth.oauth_server).
A person adding Legate to Claude, Le Chat or an IDE logs in with one of these
and acts as it: its name is the principal of every call, with its role
(user, approver or admin), tenant and profile. Passwords are kept as
argon2id hashes; they are read from the terminal, or from standard input.`,
	}
	cmd.AddCommand(userAddCmd(g), userListCmd(g), userPasswdCmd(g), userDisableCmd(g))
	return cmd
}

func userAddCmd(g Hooks) *cobra.Command {
	var p auth.Principal
	cmd := &cobra.Command{
		Use:     "add NAME [--role R] [--tenant T] [--profile P]",
		Short:   "Make an account; its password is read from the terminal or standard input",
		Example: `  printf %s "$PASSWORD" | legate user add alice --role approver`,
		Args:    cobra.ExactArgs(1),
		RunE: g.WithEnv(func(cmd *cobra.Command, argv []string, e Env) error {
			p.Name = argv[0]
			pw, err := g.ReadSecret(cmd.Context(), cmd, "the password of "+p.Name)
			if err != nil {
				return err
			}
			err = oauth.AddUser(cmd.Context(), e.Store.Users(), p, string(pw))
			if errors.Is(err, store.ErrExists) {
				return fmt.Errorf("a user named %q exists", p.Name)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "made user %q (role %s, tenant %s)\n", p.Name, p.Role, cli.OrDash(p.Tenant))
			if e.Config.Auth.OAuthServer == nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "note: the config does not turn the authorization server on (auth.oauth_server); until it does nobody logs in")
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&p.Tenant, "tenant", "", "the user's tenant (default none)")
	cmd.Flags().StringVar(&p.Role, "role", auth.RoleUser, "user, approver or admin")
	cmd.Flags().StringVar(&p.Profile, "profile", "", "the user's profile (default none)")
	return cmd
}

type userInfo struct {
	Name     string    `json:"name"`
	Tenant   string    `json:"tenant"`
	Role     string    `json:"role"`
	Profile  string    `json:"profile"`
	Disabled bool      `json:"disabled"`
	Created  time.Time `json:"created"`
}

func userListCmd(g Hooks) *cobra.Command {
	var o *cli.Flag
	cmd := &cobra.Command{
		Use:   "list [-o table|json|yaml]",
		Short: "List accounts: name, tenant, role, profile, disabled, created",
		Args:  cobra.NoArgs,
		RunE: g.WithEnv(func(cmd *cobra.Command, _ []string, e Env) error {
			list, err := e.Store.Users().List(cmd.Context())
			if err != nil {
				return err
			}
			out := make([]userInfo, 0, len(list))
			for _, u := range list {
				out = append(out, userInfo{u.Name, u.Tenant, u.Role, u.Profile, u.Disabled, u.CreatedAt})
			}
			return o.Print(cmd, out, "no users; make one with `legate user add NAME`", func(w io.Writer) error {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tTENANT\tROLE\tPROFILE\tDISABLED\tCREATED")
				for _, u := range out {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%t\t%s\n", u.Name, cli.OrDash(u.Tenant), u.Role, cli.OrDash(u.Profile), u.Disabled, cli.LocalTime(u.Created))
				}
				return tw.Flush()
			})
		}),
	}
	o = cli.Add(cmd, "")
	return cmd
}

func userPasswdCmd(g Hooks) *cobra.Command {
	return &cobra.Command{
		Use:   "passwd NAME",
		Short: "Set an account's password, read from the terminal or standard input",
		Args:  cobra.ExactArgs(1),
		RunE: g.WithEnv(func(cmd *cobra.Command, argv []string, e Env) error {
			pw, err := g.ReadSecret(cmd.Context(), cmd, "the new password of "+argv[0])
			if err != nil {
				return err
			}
			if err := oauth.SetPassword(cmd.Context(), e.Store.Users(), argv[0], string(pw)); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "set the password of %q\n", argv[0])
			return nil
		}),
	}
}

func userDisableCmd(g Hooks) *cobra.Command {
	return &cobra.Command{
		Use:   "disable NAME",
		Short: "Disable an account: it can no longer log in, and its tokens stop working at once",
		Args:  cobra.ExactArgs(1),
		RunE: g.WithEnv(func(cmd *cobra.Command, argv []string, e Env) error {
			n, err := oauth.DisableUser(cmd.Context(), e.Store, argv[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "disabled user %q (%d tokens revoked)\n", argv[0], n)
			return nil
		}),
	}
}
