package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/store"
)

func auditCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Read the audit log: one row per call, never argument values"}
	var follow, asJSON bool
	var n int
	tail := &cobra.Command{
		Use:   "tail [-f] [-n N]",
		Short: "Show the newest audit rows, by call time; -f keeps following (-n 0 -f: only new rows)",
		Args:  cobra.NoArgs,
		RunE: g.withEnv(func(cmd *cobra.Command, _ []string, e *env) error {
			if n < 0 {
				return fmt.Errorf("-n %d: want 0 or more rows", n)
			}
			// The newest row, to follow from, and the newest n to show.
			rows, err := e.store.Audit().Query(cmd.Context(), store.AuditQuery{Limit: max(n, 1)})
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
			if len(rows) == 0 && !follow {
				if n > 0 {
					fmt.Fprintln(cmd.ErrOrStderr(), "no audit rows")
				}
				return nil
			}
			if err := printAudit(cmd.OutOrStdout(), rows, asJSON, true); err != nil {
				return err
			}
			for follow {
				select {
				case <-cmd.Context().Done():
					return nil
				case <-time.After(500 * time.Millisecond):
				}
				rows, err := e.store.Audit().Query(cmd.Context(), store.AuditQuery{AfterID: last})
				if err != nil {
					return err
				}
				if len(rows) > 0 {
					last = rows[len(rows)-1].ID
					printAudit(cmd.OutOrStdout(), rows, asJSON, false)
				}
			}
			return nil
		}),
	}
	tail.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new rows")
	tail.Flags().IntVarP(&n, "lines", "n", 20, "how many rows")
	tail.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")

	var q store.AuditQuery
	var since age
	query := &cobra.Command{
		Use:   "query [--tool T] [--principal P] [--since 24h|7d]",
		Short: "Select audit rows by tool, principal and age, by call time",
		Args:  cobra.NoArgs,
		RunE: g.withEnv(func(cmd *cobra.Command, _ []string, e *env) error {
			if since > 0 {
				q.Since = time.Now().Add(-time.Duration(since))
			}
			if q.Limit < 1 {
				return fmt.Errorf("--limit %d: want 1 or more rows", q.Limit)
			}
			if q.Tool != "" {
				// Rows name tools canonically; a client's wire name is
				// looked up in the catalog.
				gw, err := e.gateway(cmd.Context())
				if err != nil {
					return err
				}
				if en, ok := gw.Catalog().Lookup(q.Tool); ok {
					q.Tool = en.Canonical
				}
				gw.Close()
			}
			rows, err := e.store.Audit().Query(cmd.Context(), q)
			if err != nil {
				return err
			}
			if len(rows) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "no audit rows match")
				return nil
			}
			return printAudit(cmd.OutOrStdout(), rows, asJSON, true)
		}),
	}
	query.Flags().StringVar(&q.Tool, "tool", "", "tool, by canonical or wire name")
	query.Flags().StringVar(&q.Principal, "principal", "", "principal")
	query.Flags().Var(&since, "since", "only rows newer than this: a Go duration (90m, 24h) or days (7d)")
	query.Flags().IntVar(&q.Limit, "limit", 1000, "at most this many rows (the newest)")
	query.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")
	cmd.AddCommand(tail, query)
	return cmd
}

// age is a flag's span of time back from now: a Go duration, or whole
// days ("7d"), which time.ParseDuration does not take.
type age time.Duration

func (a *age) String() string { return time.Duration(*a).String() }
func (a *age) Type() string   { return "duration" }

func (a *age) Set(s string) error {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 {
			return fmt.Errorf("%q: want a number of days, e.g. 7d", s)
		}
		*a = age(time.Duration(n) * 24 * time.Hour)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("%q: want a duration (90m, 24h) or days (7d)", s)
	}
	*a = age(d)
	return nil
}

// printAudit prints rows by the time of their call: they are stored as
// calls complete, and a long call completes after shorter later ones.
func printAudit(w io.Writer, rows []store.AuditRow, asJSON, header bool) error {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b store.AuditRow) int { return a.Time.Compare(b.Time) })
	if asJSON {
		for _, r := range rows {
			if err := printJSONLine(w, r); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if header {
		fmt.Fprintln(tw, "TIME\tPRINCIPAL\tTOOL\tCLASS\tDECISION\tRULE\tAPPROVAL\tOUTCOME\tLATENCY\tARGS SHA256")
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.12s\n", r.Time.Local().Format("2006-01-02 15:04:05.000"), r.Principal, r.Tool,
			r.Class, r.Decision, r.Rule, orDash(r.ApprovalID), r.Outcome, r.Latency.Round(time.Microsecond), r.ArgsHash)
	}
	return tw.Flush()
}
