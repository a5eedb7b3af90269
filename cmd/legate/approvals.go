package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
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
			// As the operator: every tenant unless --tenant names one (""
			// being the shared tenant); through the running server when one
			// runs on this state, else from the store.
			views, err := listApprovals(cmd, g, e, state, tenant)
			if err != nil {
				return err
			}
			empty := "no approval requests"
			if state != "" {
				empty = "no " + state + " approval requests (--all lists every state)"
			}
			return listOut.Print(cmd, views, empty, func(w io.Writer) error {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tSTATE\tTOOL\tCLASS\tPRINCIPAL\tCREATED\tEXPIRES\tARGUMENTS")
				for _, a := range views {
					args := string(a.Arguments)
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
			v, err := showApproval(cmd, g, e, argv[0])
			if err != nil {
				return err
			}
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
		RunE: func(cmd *cobra.Command, argv []string) error {
			// Through the running server, which audits the decision and
			// runs the call at once; else in the store, where a server
			// started later finds it.
			live, rec, err := g.liveServer(as)
			if err != nil {
				return err
			}
			var a admin.ApprovalView
			if live != nil {
				err := live.Do(cmd.Context(), http.MethodPost, "/admin/v1/approvals/"+url.PathEscape(argv[0])+"/"+verb, map[string]string{"reason": reason}, &a)
				if err != nil {
					return err
				}
				g.through(rec)
			} else {
				g.direct("deciding in")
				e, err := g.open(cmd.Context())
				if err != nil {
					return err
				}
				defer e.Close()
				inbox := policy.NewInbox(e.store.Approvals(), e.cfg.Approvals)
				d, err := inbox.Decide(cmd.Context(), argv[0], approve, cliName(as), reason)
				if err != nil {
					return err
				}
				a = admin.ViewOf(d)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s: %s %s by %s\n", a.State, a.ID, a.Tool, string(a.Arguments), a.Decider)
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, shown to the caller")
	cmd.Flags().StringVar(&as, "as", "", "the decider's name (default cli:<user>)")
	return cmd
}

// listApprovals lists the requests in state (every state for ""), of
// tenant when --tenant is set, through the running server on e's state
// when one runs, else from e's store.
func listApprovals(cmd *cobra.Command, g *globals, e *env, state, tenant string) ([]admin.ApprovalView, error) {
	live, rec, err := g.liveServer("")
	if err != nil {
		return nil, err
	}
	if live == nil {
		f := store.ApprovalFilter{State: state, Tenant: tenant, AllTenants: !cmd.Flags().Changed("tenant"), Limit: 500}
		list, err := e.store.Approvals().List(cmd.Context(), f)
		if err != nil {
			return nil, err
		}
		views := make([]admin.ApprovalView, len(list))
		for i, a := range list {
			views[i] = admin.ViewOf(a)
		}
		return views, nil
	}
	q := url.Values{"limit": {"500"}}
	if state != "" {
		q.Set("state", state)
	}
	if cmd.Flags().Changed("tenant") {
		q.Set("tenant", tenant)
	}
	var page struct {
		Approvals []admin.ApprovalView `json:"approvals"`
	}
	if err := live.Do(cmd.Context(), http.MethodGet, joinQuery("/admin/v1/approvals", q), nil, &page); err != nil {
		return nil, err
	}
	g.through(rec)
	return page.Approvals, nil
}

// showApproval is one request, as listApprovals reads it.
func showApproval(cmd *cobra.Command, g *globals, e *env, id string) (admin.ApprovalView, error) {
	live, _, err := g.liveServer("")
	if err != nil || live == nil {
		a, err := e.store.Approvals().Get(cmd.Context(), id)
		if err != nil {
			return admin.ApprovalView{}, err
		}
		return admin.ViewOf(a), nil
	}
	var v admin.ApprovalView
	return v, live.Do(cmd.Context(), http.MethodGet, "/admin/v1/approvals/"+url.PathEscape(id), nil, &v)
}
