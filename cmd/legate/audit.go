package main

import (
	"fmt"
	"io"
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
		Short: "Show the newest audit rows; -f keeps following",
		Args:  cobra.NoArgs,
		RunE: g.withEnv(func(cmd *cobra.Command, _ []string, e *env) error {
			rows, err := e.store.Audit().Query(cmd.Context(), store.AuditQuery{Limit: n})
			if err != nil {
				return err
			}
			if err := printAudit(cmd.OutOrStdout(), rows, asJSON, true); err != nil {
				return err
			}
			var last int64
			if len(rows) > 0 {
				last = rows[len(rows)-1].ID
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
	var since time.Duration
	query := &cobra.Command{
		Use:   "query [--tool T] [--principal P] [--since 24h]",
		Short: "Select audit rows by tool, principal and age",
		Args:  cobra.NoArgs,
		RunE: g.withEnv(func(cmd *cobra.Command, _ []string, e *env) error {
			if since > 0 {
				q.Since = time.Now().Add(-since)
			}
			rows, err := e.store.Audit().Query(cmd.Context(), q)
			if err != nil {
				return err
			}
			return printAudit(cmd.OutOrStdout(), rows, asJSON, true)
		}),
	}
	query.Flags().StringVar(&q.Tool, "tool", "", "canonical tool name")
	query.Flags().StringVar(&q.Principal, "principal", "", "principal")
	query.Flags().DurationVar(&since, "since", 0, "only rows newer than this, e.g. 24h")
	query.Flags().IntVar(&q.Limit, "limit", 1000, "at most this many rows (the newest)")
	query.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")
	cmd.AddCommand(tail, query)
	return cmd
}

func printAudit(w io.Writer, rows []store.AuditRow, asJSON, header bool) error {
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
