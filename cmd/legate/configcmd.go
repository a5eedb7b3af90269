package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/server"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
)

func configCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Check the configuration"}
	cmd.AddCommand(&cobra.Command{
		Use:   "validate",
		Short: "Validate the config file and every connector instance (no I/O to providers)",
		Long: "Validate the config file and every connector instance, with the stored ones when the store\n" +
			"(--store, $LEGATE_STORE, else the state directory's database) exists (none is created). Every\n" +
			"error names its key path. Warnings (on stderr) name what is valid but will fail here: unset\n" +
			"credential or header variables, missing secret files, policy rules matching no tool.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			st, err := g.openExistingStore(ctx, cfg)
			if err != nil {
				return err
			}
			defer st.Close()
			gw, err := server.New(ctx, server.Options{Config: cfg, Store: st})
			if err != nil {
				return err
			}
			defer gw.Close()
			for _, w := range configWarnings(cfg, gw.Catalog()) {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: valid (%s, %s)\n", orNone(cfg.Path), cli.Plural(len(gw.Instances()), "connector instance"), cli.Plural(gw.Catalog().Len(), "tool"))
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of config.yaml",
		Long: "Print the JSON Schema (draft 2020-12) of config.yaml, made from the same spec the loader uses.\n" +
			"Save it beside the file and name it on the file's first line for editors to check and complete it:\n" +
			"  # yaml-language-server: $schema=legate.schema.json",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := json.MarshalIndent(config.Schema(), "", "  ")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b)
			return err
		},
	})
	return cmd
}

// openExistingStore opens the store --store, $LEGATE_STORE or the state
// directory names, so that its connector instances and upstreams count,
// without creating one: a SQLite file that does not exist, or a state
// directory that cannot be found, gives an empty store in memory instead.
func (g *globals) openExistingStore(ctx context.Context, cfg *config.File) (store.Store, error) {
	url := ""
	if dir, err := g.resolveStateDir(cfg); err == nil {
		url = g.resolveStoreURL(dir)
	} else if g.storeURL != "" || store.EnvURL() != "" {
		url = g.resolveStoreURL("")
	}
	if url != "" && !strings.Contains(url, "://") {
		url = store.DefaultScheme + "://" + url // a plain path, as store.Open takes it
	}
	if file, ok := strings.CutPrefix(url, "sqlite://"); ok && !exists(file) || url == "" {
		return sqlite.OpenMemory(ctx)
	}
	return store.Open(ctx, url)
}
