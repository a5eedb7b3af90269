package main

import (
	"cmp"
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
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/operations"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/vault"
)

func connectorCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "connector", Short: "Connector types and instances"}
	cmd.AddCommand(typescmd.New(), connectorListCmd(g), connectorShowCmd(g), connectorAddCmd(g), connectorRemoveCmd(g), connectorTestCmd(g))
	return cmd
}

// connectorInfo is a connector instance as listed and shown: its
// credentials as references (env:VAR, vault:ID), never values.
type connectorInfo struct {
	ID          string                 `json:"id"`
	Type        string                 `json:"type"`
	Tenant      string                 `json:"tenant,omitempty"`
	Credentials map[string]string      `json:"credentials,omitempty"`
	Origin      string                 `json:"origin"`
	Config      any                    `json:"config,omitempty"`
	Mode        string                 `json:"credentials_mode,omitempty"`
	OAuth       *config.ConnectorOAuth `json:"oauth,omitempty"`
	// UserCredential is the credential people supply themselves.
	UserCredential string `json:"user_credential,omitempty"`
}

// connectorInfos lists the instances of the config file and the store,
// with their config if withConfig.
func connectorInfos(cmd *cobra.Command, e *env, withConfig bool) ([]connectorInfo, error) {
	defs, err := sources.InstanceDefs(cmd.Context(), e.cfg, e.store)
	if err != nil {
		return nil, err
	}
	infos := make([]connectorInfo, len(defs))
	for i, d := range defs {
		in := connectorInfo{ID: d.ID, Type: d.Type, Tenant: d.Tenant, Origin: d.Origin, Mode: cmp.Or(d.Mode, config.CredentialsShared), OAuth: d.OAuth, UserCredential: d.UserCredential}
		if len(d.Credentials) > 0 {
			in.Credentials = map[string]string{}
		}
		for name, ref := range d.Credentials {
			in.Credentials[name] = ref.String()
		}
		if withConfig && d.Config != nil && d.Config.Kind != 0 {
			d.Config.Decode(&in.Config) // a config that does not decode is not shown
		}
		infos[i] = in
	}
	return infos, nil
}

// credentialList is an instance's credentials on one line, sorted.
func (in connectorInfo) credentialList() string {
	var creds []string
	for name, ref := range in.Credentials {
		creds = append(creds, name+"="+ref)
	}
	slices.Sort(creds)
	return cli.OrDash(strings.Join(creds, ","))
}

func connectorListCmd(g *globals) *cobra.Command {
	var out *cli.Flag
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List connector instances from the config file and the store",
		Args:  cobra.NoArgs,
		RunE: g.withEnv(func(cmd *cobra.Command, _ []string, e *env) error {
			infos, err := connectorInfos(cmd, e, false) // legate connector show ID has the config
			if err != nil {
				return err
			}
			return out.Print(cmd, infos, "no connector instances; add one with `legate connector add` (legate connector types lists the types)", func(w io.Writer) error {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tTYPE\tCREDENTIALS\tDEFINED IN")
				for _, in := range infos {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", in.ID, in.Type, in.credentialList(), in.Origin)
				}
				return tw.Flush()
			})
		}),
	}
	out = cli.Add(cmd, "")
	return cmd
}

func connectorShowCmd(g *globals) *cobra.Command {
	var out *cli.Flag
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one connector instance: type, tenant, config, credential references and where it is defined",
		Args:  cobra.ExactArgs(1),
		RunE: g.withEnv(func(cmd *cobra.Command, argv []string, e *env) error {
			infos, err := connectorInfos(cmd, e, true)
			if err != nil {
				return err
			}
			i := slices.IndexFunc(infos, func(in connectorInfo) bool { return in.ID == argv[0] })
			if i < 0 {
				return fmt.Errorf("no connector %q (legate connector list shows them)", argv[0])
			}
			in := infos[i]
			return out.Print(cmd, in, "", func(w io.Writer) error {
				cfg := "-"
				if in.Config != nil {
					b, _ := json.Marshal(in.Config)
					cfg = string(b)
				}
				return cli.Fields(w, [][2]string{{"ID", in.ID}, {"TYPE", in.Type}, {"TENANT", cli.OrDash(in.Tenant)},
					{"CONFIG", cfg}, {"CREDENTIALS", in.credentialList()}, {"CREDENTIALS MODE", in.Mode}, {"USER CREDENTIAL", cli.OrDash(in.UserCredential)}, {"DEFINED IN", in.Origin}})
			})
		}),
	}
	out = cli.Add(cmd, "")
	return cmd
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
