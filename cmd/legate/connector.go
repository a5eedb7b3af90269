package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/vault"
)

func connectorCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "connector", Short: "Connector types and instances"}
	cmd.AddCommand(connectorTypesCmd(), connectorListCmd(g), connectorAddCmd(g), connectorRemoveCmd(g), connectorTestCmd(g))
	return cmd
}

func connectorTypesCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "types",
		Short: "List the registered connector types with their config fields and credentials",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			type typeInfo struct {
				Name        string                  `json:"name"`
				Description string                  `json:"description"`
				Fields      []connectors.Field      `json:"fields"`
				Credentials []connectors.Credential `json:"credentials"`
			}
			var out []typeInfo
			for _, t := range connectors.Types() {
				ti := typeInfo{Name: t.Name, Description: t.Description, Credentials: t.Credentials}
				if t.Config != nil {
					ti.Fields, _ = connectors.FieldsOf(t.Config())
				}
				out = append(out, ti)
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), out)
			}
			for _, t := range out {
				fmt.Fprintf(cmd.OutOrStdout(), "%s — %s\n", t.Name, t.Description)
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
				for _, f := range t.Fields {
					attrs := f.Kind
					if f.Required {
						attrs += ", required"
					}
					if f.Default != "" {
						attrs += ", default " + f.Default
					}
					fmt.Fprintf(tw, "  config.%s\t%s\t%s\n", f.Name, attrs, f.Description)
				}
				for _, c := range t.Credentials {
					attrs := "secret"
					if c.Required {
						attrs += ", required"
					}
					fmt.Fprintf(tw, "  credentials.%s\t%s\t%s\n", c.Name, attrs, c.Description)
				}
				tw.Flush()
				fmt.Fprintln(cmd.OutOrStdout())
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func connectorListCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List connector instances from the config file and the store",
		Args:  cobra.NoArgs,
		RunE: g.withEnv(func(cmd *cobra.Command, _ []string, e *env) error {
			defs, err := sources.InstanceDefs(cmd.Context(), e.cfg, e.store)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTYPE\tCREDENTIALS\tDEFINED IN")
			for _, d := range defs {
				var creds []string
				for name, ref := range d.Credentials {
					creds = append(creds, name+"="+ref.String())
				}
				slices.Sort(creds)
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.ID, d.Type, orDash(strings.Join(creds, ",")), d.Origin)
			}
			return tw.Flush()
		}),
	}
}

func connectorAddCmd(g *globals) *cobra.Command {
	var typ string
	var sets []string
	var creds []string
	cmd := &cobra.Command{
		Use:   "add [ID] --type TYPE [--set KEY=VALUE ...] [--credential NAME=env:VAR|file:PATH ...]",
		Short: "Add a connector instance to the store (validated first; the id defaults to the type)",
		Example: `  legate connector add web --type http --set base_url=https://api.example.com --credential token=env:API_TOKEN
  legate connector add --type webhook --set url=https://hooks.example.com/in --credential signing_secret=file:/run/secrets/hook`,
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
			cfgMap := map[string]any{}
			for _, kv := range sets {
				key, val, ok := strings.Cut(kv, "=")
				if !ok || key == "" {
					return fmt.Errorf("--set %q: want KEY=VALUE", kv)
				}
				var v any
				if err := yaml.Unmarshal([]byte(val), &v); err != nil {
					return fmt.Errorf("--set %s: invalid value: %w", key, err)
				}
				cfgMap[key] = v
			}
			cfgJSON, err := json.Marshal(cfgMap)
			if err != nil {
				return fmt.Errorf("--set: %w", err)
			}
			credJSON, _ := json.Marshal(refs)
			rec := store.Connector{ID: id, Type: typ, Config: cfgJSON, Credentials: credJSON}
			def, err := sources.StoredDef(rec)
			if err != nil {
				return err
			}
			def.Path = "connector " + id
			if _, err := def.Build(); err != nil {
				return err
			}
			e, err := g.open(ctx)
			if err != nil {
				return err
			}
			defer e.Close()
			for _, c := range e.cfg.Connectors {
				if c.ID == id {
					return fmt.Errorf("connector id %q is already defined in %s; pick another id", id, e.cfg.Path)
				}
			}
			if err := e.store.Connectors().Create(ctx, rec); err != nil {
				if errors.Is(err, store.ErrExists) {
					return fmt.Errorf("connector id %q is already in the store; remove it first (legate connector remove %s)", id, id)
				}
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "added connector %q (type %s) to %s; a running server picks it up within seconds\n", id, typ, e.stateDir)
			return nil
		},
	}
	cmd.Flags().StringVar(&typ, "type", "", "connector type (legate connector types)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "a config field KEY=VALUE, the value read as YAML (repeatable)")
	cmd.Flags().StringArrayVar(&creds, "credential", nil, "credential reference NAME=env:VAR or NAME=file:PATH (repeatable)")
	cmd.MarkFlagRequired("type")
	return cmd
}

func connectorRemoveCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "remove ID",
		Short: "Remove a connector instance from the store",
		Args:  cobra.ExactArgs(1),
		RunE: g.withEnv(func(cmd *cobra.Command, argv []string, e *env) error {
			id := argv[0]
			inFile := slices.ContainsFunc(e.cfg.Connectors, func(c config.Connector) bool { return c.ID == id })
			return removeStored(cmd, "connector", id, e.store.Connectors().Delete(cmd.Context(), id), inFile, e.cfg.Path)
		}),
	}
}

func connectorTestCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "test [ID...]",
		Short: "Test the connection of connector instances (all by default)",
		RunE: g.withGateway(func(cmd *cobra.Command, argv []string, gw *server.Gateway) error {
			ids := argv
			if len(ids) == 0 {
				for _, d := range gw.Instances() {
					ids = append(ids, d.ID)
				}
			}
			slices.Sort(ids)
			failed := 0
			for _, id := range ids {
				// One instance at a time, so that what its test reports
				// (connectors.Reportf) is printed under it.
				var lines []string
				ctx := connectors.WithReporter(cmd.Context(), func(l string) { lines = append(lines, l) })
				results := gw.Test(ctx, id)
				err, ok := results[id]
				switch {
				case !ok:
					return fmt.Errorf("no connector %q (legate connector list shows them)", id)
				case err != nil:
					failed++
					fmt.Fprintf(cmd.OutOrStdout(), "FAIL  %s: %v\n", id, err)
				default:
					fmt.Fprintf(cmd.OutOrStdout(), "ok    %s\n", id)
				}
				for _, l := range lines {
					fmt.Fprintf(cmd.OutOrStdout(), "      %s\n", l)
				}
			}
			if failed > 0 {
				return exitError{fmt.Sprintf("%d connector(s) failed", failed)}
			}
			return nil
		}),
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// removeStored reports the deletion of a stored connector or upstream; one
// defined in the config file is not in the store, and the error says so.
func removeStored(cmd *cobra.Command, kind, id string, err error, inFile bool, file string) error {
	switch {
	case errors.Is(err, store.ErrNotFound) && inFile:
		return fmt.Errorf("%s %q is defined in %s, not in the store: edit the file to remove it", kind, id, file)
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("no %s %q in the store (legate %s list shows them)", kind, id, kind)
	case err != nil:
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "removed %s %q\n", kind, id)
	return nil
}
