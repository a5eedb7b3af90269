// Package statuscmd is `legate status`: a running server's live state
// through its admin API. Unlike the commands that read the store, it shows
// circuits and sessions as the server holds them now.
package statuscmd

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
)

// New returns the `status` command. client is the admin API asked: url
// when set, else the server on the command's state directory over its
// socket, else the address of the configuration, with token.
func New(client func(url, token string) (*admin.Client, error)) *cobra.Command {
	var url, token string
	var out *cli.Flag
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "status [--url URL] [-o table|json|yaml]",
		Short: "Show a running server's live state: version, uptime, upstream circuits, connectors, approvals, sessions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := client(url, token)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			s, err := c.Status(ctx)
			if err != nil {
				return fmt.Errorf("status: %w", err)
			}
			return out.Print(cmd, s, "", func(w io.Writer) error { return printStatus(w, s) })
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "base URL of the running server (default: the server on this state directory, over its socket; else http://<listen from the config>)")
	cmd.Flags().StringVar(&token, "token", os.Getenv("LEGATE_ADMIN_TOKEN"), "admin token, or with authentication on a bearer token of the admin role (default $LEGATE_ADMIN_TOKEN)")
	out = cli.Add(cmd, "")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	return cmd
}

// printStatus writes s for people: a summary line, then a table of
// upstreams, one of connectors and, when there are profiles, one of their
// URLs.
func printStatus(w io.Writer, s *admin.Status) error {
	ready := "ready"
	if !s.Ready {
		ready = "not ready"
	}
	uptime := (time.Duration(s.UptimeSeconds) * time.Second).String()
	fmt.Fprintf(w, "legate %s on %s, up %s, %s\n", cmp.Or(s.Version, "(unknown version)"), s.Listen, uptime, ready)
	fmt.Fprintf(w, "sessions: %d, pending approvals: %d\n\n", s.Sessions, s.PendingApprovals)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(s.Upstreams) == 0 {
		fmt.Fprintln(tw, "no upstreams")
	} else {
		fmt.Fprintln(tw, "UPSTREAM\tTRANSPORT\tCIRCUIT\tSESSIONS\tTOOLS\tQUARANTINED\tCHECKED\tLAST ERROR")
		for _, u := range s.Upstreams {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", u.ID, u.Transport, u.Circuit, u.Sessions, u.Tools,
				len(u.Quarantined), cli.Ago(u.CheckedAt), cli.OneLine(u.LastError, 80))
		}
	}
	fmt.Fprintln(tw)
	if len(s.Connectors) == 0 {
		fmt.Fprintln(tw, "no connectors")
	} else {
		fmt.Fprintln(tw, "CONNECTOR\tTYPE\tTENANT\tSTATUS\tCIRCUIT\tTOOLS\tORIGIN")
		for _, c := range s.Connectors {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", c.ID, c.Type, c.Tenant, c.Status, cli.OrDash(c.Circuit), c.Tools, c.Origin)
		}
	}
	if len(s.Profiles) > 0 {
		// One URL per toolset: a client at a profile's URL sees its view.
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "PROFILE\tURL\tFOR")
		for _, p := range s.Profiles {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, p.URL, strings.Join(p.For, ","))
		}
	}
	return tw.Flush()
}
