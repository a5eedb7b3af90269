package main

import (
	"fmt"
	"io"
	"os/user"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/store"
)

func approvalsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "approvals", Short: "The approval inbox: list, show, approve and deny sensitive calls"}
	var state, tenant string
	var all bool
	var listOut, showOut *cli.Flag
	list := &cobra.Command{
		Use:   "list",
		Short: "List approval requests (pending ones by default)",
		Args:  cobra.NoArgs,
		RunE: g.withEnv(func(cmd *cobra.Command, _ []string, e *env) error {
			if all {
				state = ""
			}
			if err := store.CheckState(state); err != nil {
				return err
			}
			// The CLI reads the store itself, as the operator: every tenant
			// unless --tenant names one ("" being the shared tenant).
			f := store.ApprovalFilter{State: state, Tenant: tenant, AllTenants: !cmd.Flags().Changed("tenant"), Limit: 500}
			list, err := e.store.Approvals().List(cmd.Context(), f)
			if err != nil {
				return err
			}
			views := make([]admin.ApprovalView, len(list))
			for i, a := range list {
				views[i] = admin.ViewOf(a)
			}
			empty := "no approval requests"
			if state != "" {
				empty = "no " + state + " approval requests (--all lists every state)"
			}
			return listOut.Print(cmd, views, empty, func(w io.Writer) error {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tSTATE\tTOOL\tCLASS\tPRINCIPAL\tCREATED\tEXPIRES\tARGUMENTS")
				for _, a := range list {
					args := string(a.Args)
					if len(args) > 60 {
						args = args[:57] + "..."
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.State, a.Tool, a.Class, a.Principal,
						a.CreatedAt.Local().Format(time.DateTime), a.ExpiresAt.Local().Format(time.DateTime), args)
				}
				return tw.Flush()
			})
		}),
	}
	list.Flags().StringVar(&state, "state", store.StatePending, "pending, approved, denied, expired, executing, executed or failed")
	list.Flags().BoolVar(&all, "all", false, "every state")
	list.Flags().StringVar(&tenant, "tenant", "", `only this tenant's requests ("" for the shared tenant; default every tenant)`)
	listOut = cli.Add(list, cli.JSON)

	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show one request in full: arguments, the tool's definition as clients saw it, decision and outcome",
		Args:  cobra.ExactArgs(1),
		RunE: g.withEnv(func(cmd *cobra.Command, argv []string, e *env) error {
			a, err := e.store.Approvals().Get(cmd.Context(), argv[0])
			if err != nil {
				return err
			}
			v := admin.ViewOf(a)
			return showOut.Print(cmd, v, "", func(w io.Writer) error {
				return cli.Fields(w, [][2]string{{"ID", v.ID}, {"STATE", v.State}, {"TOOL", v.Tool}, {"CLASS", v.Class},
					{"PRINCIPAL", v.Principal}, {"TENANT", cli.OrDash(v.Tenant)}, {"SESSION", cli.OrDash(v.Session)},
					{"ARGUMENTS", string(v.Arguments)}, {"ARGUMENTS SHA256", v.ArgsHash}, {"DEFINITION HASH", v.DefHash},
					{"TOOL DEFINITION", cli.OrDash(string(v.Definition))},
					{"CREATED", cli.LocalTime(v.CreatedAt)}, {"EXPIRES", cli.LocalTime(v.ExpiresAt)}, {"DECIDED", cli.Ago(v.DecidedAt)},
					{"DECIDER", cli.OrDash(v.Decider)}, {"REASON", cli.OrDash(v.Reason)}, {"OUTCOME", cli.OrDash(string(v.Outcome))}})
			})
		}),
	}
	showOut = cli.Add(show, "")
	cmd.AddCommand(list, show, decideCmd(g, true), decideCmd(g, false))
	return cmd
}

func decideCmd(g *globals, approve bool) *cobra.Command {
	verb, short := "deny", "Deny a pending request; the call gets APPROVAL_DENIED"
	if approve {
		verb, short = "approve", "Approve a pending request; a running server executes it exactly once"
	}
	var reason, as string
	cmd := &cobra.Command{
		Use:   verb + " ID [--reason TEXT]",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: g.withEnv(func(cmd *cobra.Command, argv []string, e *env) error {
			if as == "" {
				as = "cli"
				if u, err := user.Current(); err == nil {
					as = "cli:" + u.Username
				}
			}
			inbox := policy.NewInbox(e.store.Approvals(), e.cfg.Approvals)
			a, err := inbox.Decide(cmd.Context(), argv[0], approve, as, reason)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s: %s %v by %s\n", a.State, a.ID, a.Tool, string(a.Args), a.Decider)
			return nil
		}),
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, shown to the caller")
	cmd.Flags().StringVar(&as, "as", "", "the decider's name (default cli:<user>)")
	return cmd
}
