package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
)

// statusCmd asks a running server for its live state through the admin
// API: unlike the commands that read the store, it shows circuits and
// sessions as the server holds them now.
func statusCmd(g *globals) *cobra.Command {
	var url, token string
	var out *cli.Flag
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "status [--url URL] [-o table|json|yaml]",
		Short: "Show a running server's live state: version, uptime, upstream circuits, connectors, approvals, sessions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c := &admin.Client{URL: url, Token: token}
			if url == "" {
				// The server on this state directory, over its socket; else
				// the address of the config, with the admin token.
				live, _, err := g.liveServer("")
				if err != nil {
					return err
				}
				if c = live; c == nil {
					c = &admin.Client{URL: g.serverURL(), Token: token}
				}
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

// serverURL is the base URL of the server the config describes: its listen
// address, a wildcard host asked on loopback.
func (g *globals) serverURL() string {
	listen := "127.0.0.1:8080"
	if cfg, err := g.loadConfig(); err == nil && cfg.Listen != "" {
		listen = cfg.Listen
	}
	if host, port, err := net.SplitHostPort(listen); err == nil && (host == "" || host == "0.0.0.0" || host == "::") {
		listen = net.JoinHostPort("127.0.0.1", port)
	}
	return "http://" + listen
}

// printStatus writes s for people: a summary line, then a table of
// upstreams and one of connectors.
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
		fmt.Fprintln(tw, "CONNECTOR\tTYPE\tTENANT\tTOOLS\tORIGIN")
		for _, c := range s.Connectors {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", c.ID, c.Type, c.Tenant, c.Tools, c.Origin)
		}
	}
	return tw.Flush()
}
