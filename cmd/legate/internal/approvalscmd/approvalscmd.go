// Package approvalscmd is `legate approvals`: the approval inbox (list,
// show, approve, deny). A command goes through the server running on its
// state directory when there is one, which runs the approved call at once;
// else it uses the store, and says so. A decision is audited either way.
package approvalscmd

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/local"
	"github.com/legate-mcp/legate/store"
)

// Env is what a command works on without a running server.
type Env struct {
	Config *config.File
	Store  store.Store
	// Decide is the operation that decides a request in Store, audited
	// there as every decision is (operations.Standalone).
	Decide func(context.Context, admin.Decision) (*store.Approval, error)
}

// Hooks lend the commands the CLI's opening of the env and its way to the
// running server.
type Hooks struct {
	WithEnv func(run func(cmd *cobra.Command, argv []string, e Env) error) func(*cobra.Command, []string) error
	// Live is the admin API of the server running on the command's state
	// directory, acting as as, and a function that says it was used; a nil
	// client when none runs there.
	Live func(as string) (c *admin.Client, through func(), err error)
	// Direct says, before it does, that the command uses the store itself.
	Direct func(verb string)
}

// New returns the `approvals` command.
func New(h Hooks) *cobra.Command {
	cmd := &cobra.Command{Use: "approvals", Short: "The approval inbox: list, show, approve and deny sensitive calls"}
	var state, tenant string
	var all bool
	var listOut, showOut *cli.Flag
	list := &cobra.Command{
		Use:   "list",
		Short: "List approval requests (pending ones by default)",
		Args:  cobra.NoArgs,
		RunE: h.WithEnv(func(cmd *cobra.Command, _ []string, e Env) error {
			if all {
				state = ""
			}
			if err := store.CheckState(state); err != nil {
				return err
			}
			// As the operator: every tenant unless --tenant names one (""
			// being the shared tenant); through the running server when one
			// runs on this state, else from the store.
			views, err := listApprovals(cmd, h, e, state, tenant)
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
		RunE: h.WithEnv(func(cmd *cobra.Command, argv []string, e Env) error {
			v, err := showApproval(cmd, h, e, argv[0])
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
	cmd.AddCommand(list, show, decideCmd(h, true), decideCmd(h, false))
	return cmd
}

func decideCmd(h Hooks, approve bool) *cobra.Command {
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
			// Through the running server, which runs the call at once; else
			// in the store, where a server started later finds it. The
			// decision is audited either way.
			live, through, err := h.Live(as)
			if err != nil {
				return err
			}
			var a admin.ApprovalView
			if live != nil {
				err := live.Do(cmd.Context(), http.MethodPost, "/admin/v1/approvals/"+url.PathEscape(argv[0])+"/"+verb, map[string]string{"reason": reason}, &a)
				if err != nil {
					return err
				}
				through()
			} else {
				h.Direct("deciding in")
				err := h.WithEnv(func(cmd *cobra.Command, argv []string, e Env) error {
					d, err := e.Decide(cmd.Context(), admin.Decision{ID: argv[0], Approve: approve, Decider: local.Caller(as), Reason: reason})
					if err == nil {
						a = admin.ViewOf(d)
					}
					return err
				})(cmd, argv)
				if err != nil {
					return err
				}
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
func listApprovals(cmd *cobra.Command, h Hooks, e Env, state, tenant string) ([]admin.ApprovalView, error) {
	live, through, err := h.Live("")
	if err != nil {
		return nil, err
	}
	if live == nil {
		f := store.ApprovalFilter{State: state, Tenant: tenant, AllTenants: !cmd.Flags().Changed("tenant"), Limit: 500}
		list, err := e.Store.Approvals().List(cmd.Context(), f)
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
	if err := live.Do(cmd.Context(), http.MethodGet, "/admin/v1/approvals?"+q.Encode(), nil, &page); err != nil {
		return nil, err
	}
	through()
	return page.Approvals, nil
}

// showApproval is one request, as listApprovals reads it.
func showApproval(cmd *cobra.Command, h Hooks, e Env, id string) (admin.ApprovalView, error) {
	live, _, err := h.Live("")
	if err != nil {
		return admin.ApprovalView{}, err
	}
	if live == nil {
		a, err := e.Store.Approvals().Get(cmd.Context(), id)
		if err != nil {
			return admin.ApprovalView{}, err
		}
		return admin.ViewOf(a), nil
	}
	var v admin.ApprovalView
	return v, live.Do(cmd.Context(), http.MethodGet, "/admin/v1/approvals/"+url.PathEscape(id), nil, &v)
}
