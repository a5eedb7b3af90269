package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
	"github.com/legate-mcp/legate/cmd/legate/internal/typescmd"
	"github.com/legate-mcp/legate/operations"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/vault"
)

func connectorCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "connector", Short: "Connector types and instances"}
	cmd.AddCommand(typescmd.New(), connectorListCmd(g), connectorShowCmd(g), connectorAddCmd(g), connectorRemoveCmd(g), connectorTestCmd(g))
	return cmd
}

// connectorRecords are the records of every instance, from the one
// operation: through the running server, whose circuits and tests it
// holds, else on the store; id, when set, names the one wanted.
func connectorRecords(g *globals, cmd *cobra.Command, id string) ([]admin.Connector, error) {
	var list []admin.Connector
	live, through, err := g.live("")
	switch {
	case err != nil:
		return nil, err
	case live != nil && id != "":
		var c admin.Connector
		err = live.Do(cmd.Context(), http.MethodGet, "/admin/v1/connectors/"+url.PathEscape(id), nil, &c)
		list = []admin.Connector{c}
	case live != nil:
		var body struct {
			Connectors []admin.Connector `json:"connectors"`
		}
		err = live.Do(cmd.Context(), http.MethodGet, "/admin/v1/connectors", nil, &body)
		list = body.Connectors
	default:
		err = g.withOps(func(cmd *cobra.Command, _ []string, ops *operations.Ops) error {
			if id == "" {
				list, err = ops.Connectors(cmd.Context())
				return err
			}
			c, err := ops.Connector(cmd.Context(), id)
			list = []admin.Connector{c}
			return err
		})(cmd, nil)
	}
	if live != nil && err == nil {
		through()
	}
	if err != nil && id != "" && admin.ErrorCode(err) == admin.CodeNotFound {
		return nil, fmt.Errorf("no connector %q (legate connector list shows them)", id)
	}
	return list, err
}

// credentialList is an instance's credentials on one line, sorted.
func credentialList(c admin.Connector) string {
	creds := make([]string, 0, len(c.Credentials))
	for name, ref := range c.Credentials {
		creds = append(creds, name+"="+ref)
	}
	slices.Sort(creds)
	return cli.OrDash(strings.Join(creds, ","))
}

func connectorListCmd(g *globals) *cobra.Command {
	var out *cli.Flag
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List connector instances from the config file and the store, with their status and environment",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := connectorRecords(g, cmd, "")
			if err != nil {
				return err
			}
			return out.Print(cmd, list, "no connector instances; add one with `legate connector add` (legate connector types lists the types)", func(w io.Writer) error {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tTYPE\tSTATUS\tENVIRONMENT\tCREDENTIALS\tDEFINED IN")
				for _, c := range list {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, c.Type, c.Status, cli.OrDash(c.Environment), credentialList(c), c.Origin)
				}
				return tw.Flush()
			})
		},
	}
	out = cli.Add(cmd, "")
	return cmd
}

func connectorShowCmd(g *globals) *cobra.Command {
	var out *cli.Flag
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one connector instance: its definition, environment, status, circuit, adapter and API versions, and the scopes its credential has against those its tools need",
		Long: `Show one connector instance: type, tenant, config, credential references and where it is
defined, and its record: environment (production or sandbox), status (active, degraded or
disabled, and why), circuit (closed, half-open or open; - when no server runs it), adapter and
provider API versions, the scopes its credential has (from its last test), those its tools
need, and those missing. A running server's live state is shown through it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			list, err := connectorRecords(g, cmd, argv[0])
			if err != nil {
				return err
			}
			c := list[0]
			return out.Print(cmd, c, "", func(w io.Writer) error { return cli.Fields(w, connectorFields(c)) })
		},
	}
	out = cli.Add(cmd, "")
	return cmd
}

// connectorFields are the lines of `legate connector show`.
func connectorFields(c admin.Connector) [][2]string {
	cfg := "-"
	if len(c.Config) > 0 {
		cfg = string(c.Config)
	}
	status := c.Status
	if len(c.StatusReasons) > 0 {
		status += ": " + strings.Join(c.StatusReasons, "; ")
	}
	circuit := cli.OrDash(c.Circuit)
	if !c.RetryAt.IsZero() {
		circuit += ", a trial call at " + cli.LocalTime(c.RetryAt)
	}
	test := "never"
	if t := c.LastTest; t != nil {
		test = "ok, " + cli.LocalTime(t.At)
		if !t.OK {
			test = "FAILED, " + cli.LocalTime(t.At) + ": " + t.Error
		}
	}
	f := [][2]string{{"ID", c.ID}, {"TYPE", c.Type}, {"TENANT", cli.OrDash(c.Tenant)},
		{"CONFIG", cfg}, {"CREDENTIALS", credentialList(c)}, {"CREDENTIALS MODE", c.CredentialsMode}, {"USER CREDENTIAL", cli.OrDash(c.UserCredential)}, {"DEFINED IN", c.Origin},
		{"ENVIRONMENT", cli.OrDash(c.Environment)}, {"STATUS", status}, {"CIRCUIT", circuit},
		{"ADAPTER VERSION", cli.OrDash(c.AdapterVersion)}, {"API VERSION", cli.OrDash(c.APIVersion)}}
	if s := c.Scopes; s != nil {
		has, missing := "unknown (the provider did not tell, or no test yet: legate connector test "+c.ID+")", "unknown"
		if s.Known {
			has, missing = cli.OrDash(strings.Join(s.Has, ", ")), cli.OrDash(strings.Join(s.Missing, ", "))
		}
		f = append(f, [2]string{"SCOPES HAS", has}, [2]string{"SCOPES NEEDS", cli.OrDash(strings.Join(s.Needs, ", "))}, [2]string{"SCOPES MISSING", missing})
	}
	return append(f, [2]string{"LAST TEST", test})
}

func connectorAddCmd(g *globals) *cobra.Command {
	var typ string
	var sets []string
	var creds, oauth []string
	var mode, userCred string
	cmd := &cobra.Command{
		Use:   "add [ID] --type TYPE [--set KEY=VALUE ...] [--credential NAME=env:VAR|file:PATH ...] [--credentials-mode MODE --oauth KEY=VALUE ...]",
		Short: "Add a connector instance to the store (validated first; the id defaults to the type)",
		Example: `  legate connector add web --type http --set base_url=https://api.example.com --credential token=env:API_TOKEN
  legate connector add --type webhook --set url=https://hooks.example.com/in --credential signing_secret=file:/run/secrets/hook
  legate connector add --type github --credentials-mode per_user --oauth client_id=Iv1.abc --oauth client_secret=vault:github.oauth --oauth scopes=repo,read:org`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ctx := cmd.Context()
			id := typ
			if len(argv) == 1 {
				id = argv[0]
			}
			refs := map[string]vault.Ref{}
			for _, c := range creds {
				name, val, ok := strings.Cut(c, "=")
				if !ok {
					return fmt.Errorf("--credential %q: want NAME=env:VAR or NAME=file:PATH", c)
				}
				ref, err := vault.ParseRef(val)
				if err != nil {
					return fmt.Errorf("--credential %s: %w", name, err)
				}
				refs[name] = ref
			}
			cfgMap, err := cli.KeyValues("set", sets)
			if err != nil {
				return err
			}
			if _, err := json.Marshal(cfgMap); err != nil {
				return fmt.Errorf("--set: %w", err)
			}
			access, err := cli.ConnectorAccess(mode, oauth, userCred)
			if err != nil {
				return err
			}
			var acc sources.Access
			if len(access) > 0 {
				if err := json.Unmarshal(access, &acc); err != nil {
					return err
				}
			}
			// Added by the one operation: through the running server, else
			// on the store.
			in := admin.NewConnector{ID: id, Type: typ, Config: cfgMap, Credentials: refs, CredentialsMode: acc.CredentialsMode, OAuth: acc.OAuth, UserCredential: acc.UserCredential}
			if live, rec, err := g.liveServer(""); err != nil || live != nil {
				if err != nil {
					return err
				}
				if err := live.Do(ctx, http.MethodPost, "/admin/v1/connectors", in, nil); err != nil {
					return fmt.Errorf("connector %q not added: %w", id, err)
				}
				g.through(rec)
				fmt.Fprintf(cmd.OutOrStdout(), "added connector %q (type %s)\n", id, typ)
				return nil
			}
			g.direct("adding to")
			return g.withEnv(func(cmd *cobra.Command, _ []string, e *env) error {
				if _, err := g.operations(e).AddConnector(ctx, in); err != nil {
					return fmt.Errorf("connector %q not added: %w", id, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "added connector %q (type %s) to the store of %s; a server started on it serves it\n", id, typ, e.stateDir)
				return nil
			})(cmd, argv)
		},
	}
	cmd.Flags().StringVar(&typ, "type", "", "connector type (legate connector types)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "a config field KEY=VALUE, the value read as YAML (repeatable)")
	cmd.Flags().StringArrayVar(&creds, "credential", nil, "credential reference NAME=env:VAR or NAME=file:PATH (repeatable)")
	cmd.Flags().StringVar(&mode, "credentials-mode", "", "whose credential a call uses: shared (default), per_user or per_user_or_shared (these need --oauth or --user-credential)")
	cmd.Flags().StringVar(&userCred, "user-credential", "", "with per_user or per_user_or_shared and no --oauth: the credential each person supplies themselves (legate connect ID --token)")
	cmd.Flags().StringArrayVar(&oauth, "oauth", nil, "the OAuth app people connect with, KEY=VALUE: client_id, client_secret=env:VAR|file:PATH|vault:NAME, scopes=a,b, authorize_url, token_url, revoke_url, redirect_url, credential (repeatable)")
	cmd.MarkFlagRequired("type")
	return cmd
}

func connectorRemoveCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "remove ID",
		Short: "Remove a connector instance from the store",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, argv []string) error { return g.remove(cmd, "connector", argv[0]) },
	}
}

func connectorTestCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "test [ID...]",
		Short: "Test the connection of connector instances (all by default)",
		RunE: func(cmd *cobra.Command, argv []string) error {
			// Tested by the one operation: through the running server, whose
			// instances are the ones serving, else over a gateway on the store.
			live, through, err := g.live("")
			if err != nil {
				return err
			}
			if live != nil {
				defer through()
				return testConnectors(cmd, argv, func() ([]admin.Connector, error) {
					var list struct {
						Connectors []admin.Connector `json:"connectors"`
					}
					return list.Connectors, live.Do(cmd.Context(), http.MethodGet, "/admin/v1/connectors", nil, &list)
				}, func(id string) (t admin.ConnectorTest, err error) {
					return t, live.Do(cmd.Context(), http.MethodPost, "/admin/v1/connectors/"+url.PathEscape(id)+"/test", nil, &t)
				})
			}
			return g.withGatewayOps(func(cmd *cobra.Command, argv []string, ops *operations.Ops) error {
				return testConnectors(cmd, argv, func() ([]admin.Connector, error) { return ops.Connectors(cmd.Context()) },
					func(id string) (admin.ConnectorTest, error) { return ops.TestConnector(cmd.Context(), id) })
			})(cmd, argv)
		},
	}
}

// testConnectors tests the instances ids (all that list lists by
// default) one at a time, printing what each test reports under it.
func testConnectors(cmd *cobra.Command, ids []string, list func() ([]admin.Connector, error), test func(id string) (admin.ConnectorTest, error)) error {
	if len(ids) == 0 {
		all, err := list()
		if err != nil {
			return err
		}
		for _, c := range all {
			ids = append(ids, c.ID)
		}
	}
	slices.Sort(ids)
	failed := 0
	for _, id := range ids {
		t, err := test(id)
		switch {
		case err != nil:
			return err
		case !t.OK:
			failed++
			fmt.Fprintf(cmd.OutOrStdout(), "FAIL  %s: %s\n", id, t.Error)
		default:
			fmt.Fprintf(cmd.OutOrStdout(), "ok    %s\n", id)
		}
		for _, l := range t.Report {
			fmt.Fprintf(cmd.OutOrStdout(), "      %s\n", l)
		}
	}
	if failed > 0 {
		return exitError{fmt.Sprintf("%d connector(s) failed", failed)}
	}
	return nil
}
