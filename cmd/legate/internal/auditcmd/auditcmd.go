// Package auditcmd is `legate audit`: the audit log of the command's store
// (tail, query), read and printed by call time.
package auditcmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
	"github.com/legate-mcp/legate/store"
)

// Env is what a command reads: the audit log, and the canonical name of a
// tool as a client may name it (its wire name looked up in the catalog).
type Env struct {
	Audit     store.AuditStore
	Canonical func(ctx context.Context, tool string) (string, error)
}

// WithEnv makes a command body that runs with the CLI's env open.
type WithEnv func(run func(cmd *cobra.Command, argv []string, e Env) error) func(*cobra.Command, []string) error

// New returns the `audit` command.
func New(withEnv WithEnv) *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Read the audit log: one row per call, never argument values"}
	var follow bool
	var n int
	var tailOut, queryOut *cli.Flag
	tail := &cobra.Command{
		Use:   "tail [-f] [-n N]",
		Short: "Show the newest audit rows, by call time; -f keeps following (-n 0 -f: only new rows)",
		Args:  cobra.NoArgs,
		RunE: withEnv(func(cmd *cobra.Command, _ []string, e Env) error {
			if n < 0 {
				return fmt.Errorf("-n %d: want 0 or more rows", n)
			}
			if follow && (tailOut.Is(cli.JSON) || tailOut.Is(cli.YAML)) {
				return fmt.Errorf("-f -o %s: a followed log is a stream, print it with -o jsonl (one JSON object per line) or -o table", tailOut.Format)
			}
			// The newest row, to follow from, and the newest n to show.
			rows, err := e.Audit.Query(cmd.Context(), store.AuditQuery{Limit: max(n, 1)})
			if err != nil {
				return err
			}
			var last int64
			if len(rows) > 0 {
				last = rows[len(rows)-1].ID
			}
			if n == 0 {
				rows = nil
			}
			switch {
			case !follow && n == 0 && tailOut.Is(cli.Table):
				return nil // asked for no rows: no header either
			case !follow:
				return printAudit(cmd, tailOut, rows, "no audit rows yet: calls are recorded as they complete", true)
			}
			printed := len(rows) > 0
			if printed {
				if err := printAudit(cmd, tailOut, rows, "", true); err != nil {
					return err
				}
			}
			for follow {
				select {
				case <-cmd.Context().Done():
					return nil
				case <-time.After(500 * time.Millisecond):
				}
				rows, err := e.Audit.Query(cmd.Context(), store.AuditQuery{AfterID: last})
				if err != nil {
					return err
				}
				if len(rows) > 0 {
					last = rows[len(rows)-1].ID
					if err := printAudit(cmd, tailOut, rows, "", !printed); err != nil {
						return err
					}
					printed = true
				}
			}
			return nil
		}),
	}
	tail.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new rows")
	tail.Flags().IntVarP(&n, "lines", "n", 20, "how many rows")
	tailOut = cli.Add(tail, cli.JSONL, cli.JSONL)

	var q store.AuditQuery
	var since cli.Age
	query := &cobra.Command{
		Use:   "query [--tool T] [--principal P] [--since 24h|7d]",
		Short: "Select audit rows by tool, principal and age, by call time",
		Args:  cobra.NoArgs,
		RunE: withEnv(func(cmd *cobra.Command, _ []string, e Env) error {
			if since > 0 {
				q.Since = time.Now().Add(-time.Duration(since))
			}
			if q.Limit < 1 {
				return fmt.Errorf("--limit %d: want 1 or more rows", q.Limit)
			}
			if q.Tool != "" {
				// Rows name tools canonically; a client's wire name is
				// looked up in the catalog.
				t, err := e.Canonical(cmd.Context(), q.Tool)
				if err != nil {
					return err
				}
				q.Tool = t
			}
			rows, err := e.Audit.Query(cmd.Context(), q)
			if err != nil {
				return err
			}
			return printAudit(cmd, queryOut, rows, "no audit rows match", true)
		}),
	}
	query.Flags().StringVar(&q.Tool, "tool", "", "tool, by canonical or wire name")
	query.Flags().StringVar(&q.Principal, "principal", "", "principal")
	query.Flags().Var(&since, "since", "only rows newer than this: a Go duration (90m, 24h) or days (7d)")
	query.Flags().IntVar(&q.Limit, "limit", 1000, "at most this many rows (the newest)")
	queryOut = cli.Add(query, cli.JSONL, cli.JSONL)
	cmd.AddCommand(tail, query)
	return cmd
}

// printAudit prints rows by the time of their call: they are stored as
// calls complete, and a long call completes after shorter later ones. The
// table has a header unless it continues one already printed.
func printAudit(cmd *cobra.Command, out *cli.Flag, rows []store.AuditRow, empty string, header bool) error {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b store.AuditRow) int { return a.Time.Compare(b.Time) })
	return out.Print(cmd, rows, empty, func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		if header {
			fmt.Fprintln(tw, "TIME\tPRINCIPAL\tTOOL\tCLASS\tDECISION\tRULE\tAPPROVAL\tOUTCOME\tLATENCY\tARGS SHA256")
		}
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.12s\n", r.Time.Local().Format("2006-01-02 15:04:05.000"), r.Principal, r.Tool,
				r.Class, r.Decision, r.Rule, cli.OrDash(r.ApprovalID), r.Outcome, r.Latency.Round(time.Microsecond), r.ArgsHash)
		}
		return tw.Flush()
	})
}
