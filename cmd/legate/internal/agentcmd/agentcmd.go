// Package agentcmd is `legate agent`: run the agent on this machine
// (run), and read its history (history, show). The work is the agent
// package's; this package only wires it to the CLI's gateway and prints.
package agentcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/agent"
	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
)

// Env is what a command works on: the configuration, the store, and a
// gateway built on them serving the extra built-in tools given.
type Env struct {
	Config  *config.File
	Store   store.Store
	Runner  *agent.Runner
	Gateway func(ctx context.Context, tools ...connectors.Builtin) (*server.Gateway, error)
}

// Hooks lend the commands the CLI's opening of the env.
type Hooks struct {
	WithEnv func(run func(cmd *cobra.Command, argv []string, e Env) error) func(*cobra.Command, []string) error
}

// ErrStopped is returned when a run stopped on an error or its deadline,
// after its record was printed: the command exits non-zero.
var ErrStopped = errors.New("the run did not finish its work")

// New returns the `agent` command.
func New(h Hooks) *cobra.Command {
	cmd := &cobra.Command{Use: "agent", Short: "Run the agent on this machine: an instruction in, the work done with Legate's tools, a record out"}
	cmd.AddCommand(runCmd(h), historyCmd(h), showCmd(h))
	return cmd
}

func runCmd(h Hooks) *cobra.Command {
	var req agent.Request
	var asJSON, fresh bool
	var contextArg, scope string
	cmd := &cobra.Command{
		Use:   `run "INSTRUCTION" [--profile P] [--model M] [--max-turns N] [--workspace DIR] [--resume RUN_ID] [--json]`,
		Short: "Run an instruction to its end through the call path (policy, approvals, audit); prints the reply, or the whole record with --json",
		Args:  cobra.ExactArgs(1),
		RunE: h.WithEnv(func(cmd *cobra.Command, argv []string, e Env) error {
			ctx := cmd.Context()
			gw, err := e.Gateway(ctx)
			if err != nil {
				return err
			}
			defer gw.Close()
			gw.StartAudit(ctx)
			req.Instruction = argv[0]
			req.Caller = e.Config.Principal
			var recs []*agent.Record
			if contextArg != "" || scope != "" {
				data, err := readContext(contextArg)
				if err != nil {
					return err
				}
				if recs, err = e.Runner.RunEach(ctx, req, data, scope, fresh); err != nil && len(recs) == 0 {
					return err
				}
			} else {
				rec, err := e.Runner.Run(ctx, req)
				if err != nil {
					return err
				}
				recs = append(recs, rec)
			}
			var v any = recs
			if !strings.HasSuffix(scope, "[*]") && len(recs) == 1 {
				v = recs[0]
			}
			if asJSON {
				if err := cli.WriteJSON(cmd.OutOrStdout(), v); err != nil {
					return err
				}
			}
			for _, rec := range recs {
				if !asJSON {
					printRun(cmd.OutOrStdout(), rec)
				}
				if rec.Stopped == agent.StoppedError || rec.Stopped == agent.StoppedDeadline {
					return fmt.Errorf("%w: stopped %s: %s (legate agent show %s)", ErrStopped, rec.Stopped, rec.Error, rec.ID)
				}
			}
			return nil
		}),
	}
	f := cmd.Flags()
	f.StringVar(&req.Profile, "profile", "", "profile whose tools the run sees (default agent.profile, else the top-level profile)")
	f.StringVar(&req.Model, "model", "", "model name instead of agent.model.model")
	f.IntVar(&req.MaxTurns, "max-turns", 0, "model turns the run may take (default agent.max_turns)")
	f.StringVar(&req.Workspace, "workspace", "", "the directory the instruction is about (default the host connector's workspace root)")
	f.StringVar(&req.Resume, "resume", "", "continue the conversation of this run")
	f.BoolVar(&asJSON, "json", false, "print the whole record as JSON")
	f.StringVar(&contextArg, "context", "", "JSON (or @FILE) the instruction and --workspace are templates over: {{$.path}}, {{$this}}, {{$this.field}}")
	f.StringVar(&scope, "scope", "", "with --context: $.path[*] runs once per element of that array, each run continuing the one before")
	f.BoolVar(&fresh, "fresh", false, "with --scope: start each run afresh")
	return cmd
}

// readContext reads --context: JSON, or @FILE holding it.
func readContext(arg string) (any, error) {
	raw := []byte(arg)
	if name, ok := strings.CutPrefix(arg, "@"); ok {
		var err error
		if raw, err = os.ReadFile(name); err != nil {
			return nil, fmt.Errorf("--context: %w", err)
		}
	}
	if len(raw) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("--context: not JSON: %w", err)
	}
	return v, nil
}

// printRun prints a run for people: the reply, then what it did.
func printRun(w io.Writer, rec *agent.Record) {
	if rec.Reply != "" {
		fmt.Fprintln(w, rec.Reply)
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "run %s: stopped %s after %d turns, %d calls (%s), %d retries, %d+%d tokens\n", rec.ID, rec.Stopped, rec.Turns,
		len(rec.Calls), cli.OrDash(strings.Join(rec.ToolsUsed, ", ")), rec.Retries, rec.Usage.InputTokens, rec.Usage.OutputTokens)
}

func historyCmd(h Hooks) *cobra.Command {
	var out *cli.Flag
	var principal string
	var limit int
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List the runs of the agent, the latest first",
		Args:  cobra.NoArgs,
		RunE: h.WithEnv(func(cmd *cobra.Command, _ []string, e Env) error {
			runs, err := e.Store.AgentRuns().List(cmd.Context(), store.AgentRunFilter{Principal: principal, Limit: limit})
			if err != nil {
				return err
			}
			type row struct {
				ID          string    `json:"id"`
				Principal   string    `json:"principal"`
				Stopped     string    `json:"stopped"`
				StartedAt   time.Time `json:"started_at"`
				UpdatedAt   time.Time `json:"updated_at"`
				Instruction string    `json:"instruction"`
			}
			rows := make([]row, len(runs))
			for i, r := range runs {
				rows[i] = row{r.ID, r.Principal, r.Stopped, r.StartedAt, r.UpdatedAt, r.Instruction}
			}
			return out.Print(cmd, rows, `no runs yet (legate agent run "INSTRUCTION")`, func(w io.Writer) error {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tSTARTED\tSTOPPED\tPRINCIPAL\tINSTRUCTION")
				for _, r := range rows {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, cli.Ago(r.StartedAt), r.Stopped, r.Principal, oneLine(r.Instruction, 60))
				}
				return tw.Flush()
			})
		}),
	}
	cmd.Flags().StringVar(&principal, "principal", "", "only this principal's runs")
	cmd.Flags().IntVar(&limit, "limit", 50, "at most this many runs")
	out = cli.Add(cmd, "")
	return cmd
}

func showCmd(h Hooks) *cobra.Command {
	var out *cli.Flag
	cmd := &cobra.Command{
		Use:   "show RUN_ID",
		Short: "Show one run's record: reply, how it stopped, every call with its result (-o json: the whole record, conversation included)",
		Args:  cobra.ExactArgs(1),
		RunE: h.WithEnv(func(cmd *cobra.Command, argv []string, e Env) error {
			rec, err := agent.Show(cmd.Context(), e.Store.AgentRuns(), argv[0], "", "")
			if err != nil {
				return err
			}
			return out.Print(cmd, rec, "", func(w io.Writer) error {
				waiting := ""
				if rec.Waiting != nil {
					waiting = fmt.Sprintf("approval %s (%s) since %s", rec.Waiting.ApprovalID, rec.Waiting.Tool, cli.LocalTime(rec.Waiting.Since))
				}
				if err := cli.Fields(w, [][2]string{{"ID", rec.ID}, {"INSTRUCTION", rec.Instruction}, {"STOPPED", rec.Stopped}, {"ERROR", cli.OrDash(rec.Error)},
					{"WAITING FOR", cli.OrDash(waiting)}, {"REPLY", cli.OrDash(rec.Reply)}, {"TURNS", fmt.Sprint(rec.Turns)}, {"HOST", rec.Host},
					{"WORKSPACE", cli.OrDash(rec.Workspace)}, {"PRINCIPAL", rec.Principal}, {"MODEL", rec.Model},
					{"TOOLS USED", cli.OrDash(strings.Join(rec.ToolsUsed, ", "))}, {"SKILLS USED", cli.OrDash(strings.Join(rec.SkillsUsed, ", "))},
					{"TOKENS", fmt.Sprintf("%d in, %d out", rec.Usage.InputTokens, rec.Usage.OutputTokens)}, {"RETRIES", fmt.Sprint(rec.Retries)},
					{"RESUMED FROM", cli.OrDash(rec.ResumedFrom)}, {"STARTED", cli.LocalTime(rec.StartedAt)}}); err != nil {
					return err
				}
				fmt.Fprintf(w, "\nCALLS (%d)\n", len(rec.Calls))
				for i, c := range rec.Calls {
					status := "ok"
					if c.IsError {
						status = "error"
					}
					fmt.Fprintf(w, "%d. turn %d %s %s [%s]\n   %s\n", i+1, c.Turn, c.Tool, string(c.Arguments), status, oneLine(c.Result, 200))
				}
				return nil
			})
		}),
	}
	out = cli.Add(cmd, "")
	return cmd
}

// oneLine is s on one line, cut at n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
