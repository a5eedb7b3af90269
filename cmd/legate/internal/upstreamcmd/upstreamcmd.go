// Package upstreamcmd is `legate upstream`: the upstream MCP servers and
// their tool caches (list, show, add, remove, test, refresh, diff,
// accept). Adding and removing go through the running server on the
// command's state directory when there is one, else through the
// operations on its store; the work is package operations'.
package upstreamcmd

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
	"github.com/legate-mcp/legate/operations"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/upstream/upconfig"
	"github.com/legate-mcp/legate/vault"
)

// A RunE is a command's body.
type RunE = func(*cobra.Command, []string) error

// Hooks lend the commands the CLI's ways to its state.
type Hooks struct {
	// Live is the admin API of the server running on the command's state
	// directory and a function that says it was used; a nil client when
	// none runs there.
	Live func(as string) (c *admin.Client, through func(), err error)
	// Direct says, before it does, that the command uses the store itself.
	Direct func(verb string)
	// WithGateway runs a body with a gateway built on the command's state.
	WithGateway func(run func(*cobra.Command, []string, *server.Gateway) error) RunE
	// WithOps runs a body with the operations over the command's store;
	// WithGatewayOps with those over a gateway built on it, for the
	// operations on live upstreams.
	WithOps, WithGatewayOps func(run func(*cobra.Command, []string, *operations.Ops) error) RunE
	// Caller is who acts, as the audit log names it.
	Caller string
	// Remove removes the stored kind ("upstream") id, through the running
	// server or from the store.
	Remove func(cmd *cobra.Command, kind, id string) error
	// Failed is the error of a command that reported its failures itself.
	Failed func(msg string) error
}

// New returns the `upstream` command.
func New(h Hooks) *cobra.Command {
	cmd := &cobra.Command{Use: "upstream", Short: "Upstream MCP servers and their tool caches"}
	cmd.AddCommand(listCmd(h), showCmd(h), addCmd(h), removeCmd(h), testCmd(h), refreshCmd(h), diffCmd(h), acceptCmd(h))
	return cmd
}

func listCmd(h Hooks) *cobra.Command {
	var out *cli.Flag
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List upstreams: transport, cached and quarantined tools, last refresh and error (a running server's circuits: legate status)",
		Args:  cobra.NoArgs,
		RunE: h.WithGateway(func(cmd *cobra.Command, _ []string, gw *server.Gateway) error {
			st, err := gw.Upstreams().Status(cmd.Context())
			if err != nil {
				return err
			}
			for _, s := range st {
				for _, uri := range s.SharedURIs {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: upstream %s: resource %s\n", s.ID, uri)
				}
			}
			return out.Print(cmd, st, "no upstreams configured; add one with `legate upstream add`", func(w io.Writer) error {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				// The store holds no circuit: a running server's are shown by
				// legate status, and this process's own would always be closed.
				fmt.Fprintln(tw, "ID\tTRANSPORT\tSTATUS\tTOOLS\tQUARANTINED\tLAST REFRESH\tLAST ERROR\tDEFINED IN")
				for _, s := range st {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", s.ID, s.Transport, upstreamState(s), s.Tools, s.Quarantined,
						cli.Ago(s.RefreshedAt), cli.OrDash(s.LastError), s.Origin)
				}
				return tw.Flush()
			})
		}),
	}
	out = cli.Add(cmd, cli.JSON)
	return cmd
}

// upstreamInfo is one upstream as shown: its state, how it is reached
// (the names of its environment variables, never their values) and its
// tools by canonical name.
type upstreamInfo struct {
	upstream.Status
	URL         string   `json:"url,omitempty"`
	Command     []string `json:"command,omitempty"`
	Env         []string `json:"env,omitempty"`
	HeaderEnv   []string `json:"header_env,omitempty"`
	Credentials []string `json:"credentials,omitempty"` // token and headers: KEY=REFERENCE
	Session     string   `json:"session"`
	ToolNames   []string `json:"tool_names"`
	Quarantines []string `json:"quarantined_tools"`
}

func showCmd(h Hooks) *cobra.Command {
	var out *cli.Flag
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one upstream: state, transport, command or URL, session mode, its tools and quarantined ones",
		Args:  cobra.ExactArgs(1),
		RunE: h.WithGateway(func(cmd *cobra.Command, argv []string, gw *server.Gateway) error {
			m := gw.Upstreams()
			u, ok := m.Upstream(argv[0])
			if !ok {
				return fmt.Errorf("no upstream %q (legate upstream list shows them)", argv[0])
			}
			st, err := m.Status(cmd.Context())
			if err != nil {
				return err
			}
			c := u.Config()
			in := upstreamInfo{URL: c.URL, Command: c.Command, Session: cmp.Or(c.Session, upconfig.SessionShared), ToolNames: []string{},
				Quarantines: []string{}, Env: slices.Sorted(maps.Keys(c.Env))}
			if i := slices.IndexFunc(st, func(s upstream.Status) bool { return s.ID == argv[0] }); i >= 0 {
				in.Status = st[i]
			}
			for h, v := range c.HeaderEnv {
				in.HeaderEnv = append(in.HeaderEnv, h+"="+v)
			}
			slices.Sort(in.HeaderEnv)
			for _, r := range c.CredentialRefs() {
				in.Credentials = append(in.Credentials, r.Key+"="+r.Ref.String())
			}
			for _, t := range m.Tools() {
				if t.Upstream == argv[0] {
					in.ToolNames = append(in.ToolNames, t.Canonical())
				}
			}
			for _, q := range m.Quarantine() {
				if q.Tool.Upstream == argv[0] {
					in.Quarantines = append(in.Quarantines, q.Tool.Canonical())
				}
			}
			return out.Print(cmd, in, "", func(w io.Writer) error {
				target := in.URL
				if target == "" {
					target = strings.Join(in.Command, " ")
				}
				return cli.Fields(w, [][2]string{{"ID", in.ID}, {"TRANSPORT", in.Transport}, {"TARGET", target},
					{"ENV", cli.OrDash(strings.Join(in.Env, ","))}, {"HEADER ENV", cli.OrDash(strings.Join(in.HeaderEnv, ","))},
					{"CREDENTIALS", cli.OrDash(strings.Join(in.Credentials, ","))},
					{"SESSION", in.Session}, {"STATUS", upstreamState(in.Status)}, {"LAST REFRESH", cli.Ago(in.RefreshedAt)},
					{"LAST ERROR", cli.OrDash(in.LastError)}, {"DEFINED IN", in.Origin},
					{"TOOLS", cli.OrDash(strings.Join(in.ToolNames, ", "))}, {"QUARANTINED", cli.OrDash(strings.Join(in.Quarantines, ", "))}})
			})
		}),
	}
	out = cli.Add(cmd, "")
	return cmd
}

// upstreamState is an upstream's state as the store records it.
func upstreamState(s upstream.Status) string {
	switch {
	case s.LastError != "":
		return "error"
	case s.RefreshedAt.IsZero():
		return "never refreshed"
	}
	return "ok"
}

func addCmd(h Hooks) *cobra.Command {
	var def upstream.Config
	var session, transport, timeout, token string
	var headerEnv, headerRefs, env []string
	var noPrefix, distrust, noRefresh bool
	cmd := &cobra.Command{
		Use:   "add ID (--url URL | -- PROGRAM [ARG...])",
		Short: "Add an upstream to the store, connect to it and cache its tools",
		Example: `  legate upstream add github --url https://api.example.com/mcp/ --header-env Authorization=GITHUB_MCP_TOKEN
  legate upstream add crm --url https://mcp.crm.example/mcp --token vault:crm-token
  legate upstream add fs --description "files of the team share, read and write" --session per_client -- node /opt/mcp/server-filesystem/dist/index.js /srv/data`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ctx := cmd.Context()
			def.ID = argv[0]
			def.Command = argv[1:]
			def.Session, def.Transport = session, transport
			if timeout != "" {
				if err := def.Timeout.UnmarshalText([]byte(timeout)); err != nil {
					return fmt.Errorf("--timeout: %w", err)
				}
			}
			var err error
			if def.HeaderEnv, err = pairs("--header-env", headerEnv); err != nil {
				return err
			}
			if def.Env, err = pairs("--env", env); err != nil {
				return err
			}
			if def.Token, def.Headers, err = credentialRefs(token, headerRefs); err != nil {
				return err
			}
			if noPrefix {
				def.Prefix = new(bool)
			}
			if distrust {
				def.TrustAnnotations = new(bool)
			}
			if errs := def.Validate("upstream " + def.ID); len(errs) > 0 {
				return errors.Join(errs...)
			}
			// Added by the one operation, which connects and caches the
			// tools unless --no-refresh: through the running server, else
			// on the store.
			raw, _ := json.Marshal(def)
			if !noRefresh {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: connecting…\n", def.ID)
			}
			start := time.Now()
			var res admin.Refresh
			live, through, err := h.Live("")
			switch {
			case err != nil:
				return err
			case live != nil:
				var added struct {
					Tools int `json:"tools"`
				}
				err = live.Do(ctx, http.MethodPost, "/admin/v1/upstreams?connect="+strconv.FormatBool(!noRefresh), json.RawMessage(raw), &added)
				res.Tools = added.Tools
				if err == nil {
					through()
				}
			default:
				h.Direct("adding to")
				err = h.WithOps(func(_ *cobra.Command, _ []string, ops *operations.Ops) (err error) {
					res, err = ops.AddUpstream(ctx, raw, !noRefresh)
					return err
				})(cmd, argv)
			}
			if e := (*admin.Error)(nil); errors.As(err, &e) && e.Status == http.StatusBadGateway {
				return fmt.Errorf("%s (--no-refresh stores it without connecting)", message(err))
			} else if err != nil {
				return fmt.Errorf("upstream %q not added: %w", def.ID, err)
			}
			if noRefresh {
				fmt.Fprintf(cmd.OutOrStdout(), "added upstream %q (%s), not connected\n", def.ID, def.TransportName())
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added upstream %q (%s): %d tools in %s\n", def.ID, def.TransportName(), res.Tools, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&def.Description, "description", "", "one line on what this server is for, shown to clients in the gateway's instructions (default: its id and command or URL)")
	f.StringVar(&def.URL, "url", "", "URL of a remote server (Streamable HTTP, or SSE with --transport sse)")
	f.StringVar(&transport, "transport", "", "streamable (default) or sse, for --url")
	f.StringArrayVar(&headerEnv, "header-env", nil, "HEADER=ENV_VAR: send HEADER with the value of ENV_VAR (repeatable)")
	f.StringVar(&token, "token", "", "the server's static token as a reference, env:NAME, file:PATH or vault:NAME: sent as Authorization: Bearer TOKEN, resolved when a session opens")
	f.StringArrayVar(&headerRefs, "header", nil, "HEADER=REF: send HEADER with the value REF (env:NAME, file:PATH or vault:NAME) holds (repeatable)")
	f.StringArrayVar(&env, "env", nil, "NAME=VALUE in a stdio server's environment (repeatable)")
	f.StringVar(&session, "session", "", "shared (default) or per_client")
	f.StringVar(&timeout, "timeout", "", "per-call timeout, e.g. 60s")
	f.BoolVar(&noPrefix, "no-prefix", false, "expose its tools under their own names, not mcp.<id>.<tool>")
	f.BoolVar(&distrust, "distrust-annotations", false, "ignore readOnlyHint: every tool is at least class write")
	f.BoolVar(&noRefresh, "no-refresh", false, "do not connect now")
	return cmd
}

// credentialRefs parses --token and --header: references, never values.
func credentialRefs(token string, headers []string) (*vault.Ref, map[string]vault.Ref, error) {
	var tok *vault.Ref
	if token != "" {
		r, err := vault.ParseRef(token)
		if err != nil {
			return nil, nil, fmt.Errorf("--token: %w", err)
		}
		tok = &r
	}
	hs, err := pairs("--header", headers)
	if err != nil || hs == nil {
		return tok, nil, err
	}
	refs := map[string]vault.Ref{}
	for h, v := range hs {
		if refs[h], err = vault.ParseRef(v); err != nil {
			return nil, nil, fmt.Errorf("--header %s: %w", h, err)
		}
	}
	return tok, refs, nil
}

func pairs(flag string, list []string) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %q: want NAME=VALUE", flag, kv)
		}
		m[k] = v
	}
	return m, nil
}

func removeCmd(h Hooks) *cobra.Command {
	return &cobra.Command{
		Use:   "remove ID",
		Short: "Remove a stored upstream and its tool cache",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, argv []string) error { return h.Remove(cmd, "upstream", argv[0]) },
	}
}

func testCmd(h Hooks) *cobra.Command {
	return &cobra.Command{
		Use:   "test ID",
		Short: "Connect to an upstream, list its tools, cache them and report",
		Args:  cobra.ExactArgs(1),
		RunE:  refresh(h),
	}
}

func refreshCmd(h Hooks) *cobra.Command {
	return &cobra.Command{
		Use:   "refresh [ID...]",
		Short: "Refresh the tool caches of upstreams (all by default); a running server picks the result up",
		RunE:  refresh(h),
	}
}

// refresh refreshes each upstream in turn (all by default) by the one
// operation, through the running server, else over a gateway on the
// store, printing its progress and what changed; it fails if any failed.
func refresh(h Hooks) RunE {
	return func(cmd *cobra.Command, argv []string) error {
		live, through, err := h.Live("")
		if err != nil {
			return err
		}
		if live == nil {
			return h.WithGatewayOps(func(cmd *cobra.Command, ids []string, ops *operations.Ops) error {
				return refreshEach(cmd, h, ids, func() ([]admin.UpstreamStatus, error) { return ops.Upstreams(cmd.Context()) },
					func(id string) (admin.Refresh, error) { return ops.RefreshUpstream(cmd.Context(), id) })
			})(cmd, argv)
		}
		defer through()
		return refreshEach(cmd, h, argv, func() ([]admin.UpstreamStatus, error) {
			var list struct {
				Upstreams []admin.UpstreamStatus `json:"upstreams"`
			}
			return list.Upstreams, live.Do(cmd.Context(), http.MethodGet, "/admin/v1/upstreams", nil, &list)
		}, func(id string) (r admin.Refresh, err error) {
			return r, live.Do(cmd.Context(), http.MethodPost, "/admin/v1/upstreams/"+url.PathEscape(id)+"/refresh", nil, &r)
		})
	}
}

// refreshEach refreshes ids (all that list lists by default) with do.
func refreshEach(cmd *cobra.Command, h Hooks, ids []string, list func() ([]admin.UpstreamStatus, error), do func(id string) (admin.Refresh, error)) error {
	all, err := list()
	if err != nil {
		return err
	}
	transports := map[string]string{}
	for _, u := range all {
		transports[u.ID] = u.Transport
	}
	if len(ids) == 0 {
		for _, u := range all {
			ids = append(ids, u.ID)
		}
	}
	out := cmd.OutOrStdout()
	failed := 0
	for i, id := range ids {
		if _, ok := transports[id]; !ok {
			return fmt.Errorf("no upstream %q (legate upstream list shows them)", id)
		}
		fmt.Fprintf(out, "[%d/%d] %s: connecting…\n", i+1, len(ids), id)
		start := time.Now()
		r, err := do(id)
		if err != nil {
			failed++
			fmt.Fprintf(out, "[%d/%d] %s: FAILED: %s\n", i+1, len(ids), id, message(err))
			continue
		}
		fmt.Fprintf(out, "[%d/%d] %s: ok in %s, %d tools (%s)\n", i+1, len(ids), id, time.Since(start).Round(time.Millisecond), r.Tools, transports[id])
		for _, name := range slices.Concat(prefixed("+ ", r.Added), prefixed("- ", r.Removed), prefixed("~ ", r.Changed)) {
			fmt.Fprintf(out, "    %s\n", name)
		}
	}
	if failed > 0 {
		return h.Failed(fmt.Sprintf("%d upstream(s) failed", failed))
	}
	return nil
}

// message is what err says: an error answer's message, without its status.
func message(err error) string {
	if e := (*admin.Error)(nil); errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

func prefixed(p string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = p + n
	}
	return out
}

// quarantineDiff is a quarantined tool's accepted definition beside the
// one the upstream lists now.
type quarantineDiff struct {
	Tool         string          `json:"tool"`
	AcceptedHash string          `json:"accepted_hash,omitempty"`
	Hash         string          `json:"hash"`
	Accepted     json.RawMessage `json:"accepted,omitempty"`
	Now          json.RawMessage `json:"now"`
}

func diffCmd(h Hooks) *cobra.Command {
	var o *cli.Flag
	cmd := &cobra.Command{
		Use:   "diff ID",
		Short: "Show each quarantined tool of an upstream: its accepted definition beside the new one",
		Args:  cobra.ExactArgs(1),
		RunE: h.WithGateway(func(cmd *cobra.Command, argv []string, gw *server.Gateway) error {
			if _, ok := gw.Upstreams().Upstream(argv[0]); !ok {
				return fmt.Errorf("no upstream %q (legate upstream list shows them)", argv[0])
			}
			var diffs []quarantineDiff
			for _, q := range gw.Upstreams().Quarantine() {
				if q.Tool.Upstream != argv[0] {
					continue
				}
				cur, _ := json.Marshal(q.Tool.Def)
				diffs = append(diffs, quarantineDiff{Tool: q.Tool.Canonical(), AcceptedHash: q.PinnedHash, Hash: q.Tool.Hash, Accepted: q.Pinned, Now: cur})
			}
			return o.Print(cmd, diffs, "no quarantined tool in "+argv[0], func(w io.Writer) error {
				for _, d := range diffs {
					fmt.Fprintf(w, "%s  (accepted %.12s, now %.12s)\n", d.Tool, cli.OrDash(d.AcceptedHash), d.Hash)
					cli.SideBySide(w, cli.Pretty(d.Accepted), cli.Pretty(d.Now))
					fmt.Fprintln(w)
				}
				_, err := fmt.Fprintf(w, "accept with: legate upstream accept %s [TOOL...]\n", argv[0])
				return err
			})
		}),
	}
	o = cli.Add(cmd, "")
	return cmd
}

func acceptCmd(h Hooks) *cobra.Command {
	return &cobra.Command{
		Use:   "accept ID [TOOL...]",
		Short: "Accept the current definitions of an upstream's tools (all by default), releasing them from quarantine",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			// Accepted by the one operation: through the running server,
			// else over a gateway on the store.
			var res struct {
				Accepted []string `json:"accepted"`
			}
			live, through, err := h.Live("")
			switch {
			case err != nil:
				return err
			case live != nil:
				err = live.Do(cmd.Context(), http.MethodPost, "/admin/v1/upstreams/"+url.PathEscape(argv[0])+"/accept", map[string][]string{"tools": argv[1:]}, &res)
				if err == nil {
					through()
				}
			default:
				err = h.WithGatewayOps(func(cmd *cobra.Command, argv []string, ops *operations.Ops) (err error) {
					res.Accepted, err = ops.Accept(cmd.Context(), argv[0], h.Caller, argv[1:])
					return err
				})(cmd, argv)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "accepted %d tool definitions of %s: %s\n", len(res.Accepted), argv[0], strings.Join(res.Accepted, ", "))
			return nil
		},
	}
}
