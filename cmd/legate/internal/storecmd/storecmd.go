// Package storecmd is `legate store`: check a store, and migrate the
// embedded one to PostgreSQL for replicas. The work is package
// store/migrate's; this package reads flags and prints.
package storecmd

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/store/migrate"
	"github.com/legate-mcp/legate/store/postgres"
)

// Resolver finds the store a command works on when --store does not name
// it: the config's state directory, then that directory's database.
type Resolver struct {
	Config   func() (*config.File, error)
	StateDir func(*config.File) (string, error)
	StoreURL func(dir string) string
}

func (r Resolver) url() (string, error) {
	cfg, err := r.Config()
	if err != nil {
		return "", err
	}
	dir, err := r.StateDir(cfg)
	if err != nil {
		return "", err
	}
	return r.StoreURL(dir), nil
}

// New returns the `store` command.
func New(r Resolver) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "The state store: check it, migrate the embedded one to PostgreSQL",
		Long: `The state store, named by --store URL, else $LEGATE_STORE or $LEGATE_STORE_URL,
else the embedded database in the state directory. sqlite://PATH is the
embedded store; postgres://USER:PASSWORD@HOST:5432/DATABASE is the store
several replicas share.`,
	}
	cmd.AddCommand(checkCmd(r), migrateCmd(r))
	return cmd
}

func checkCmd(r Resolver) *cobra.Command {
	var out *cli.Flag
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Connect to the store and report its schema version, pending migrations and row counts",
		Long: `Connect to the store and report its schema version, the migrations this
binary would apply at its next start (legate serve applies them, one
replica at a time), and how many rows each table holds. It changes
nothing; it fails when the store is newer than this binary.`,
		Example: `  legate store check --store postgres://legate@db:5432/legate`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			url, err := r.url()
			if err != nil {
				return err
			}
			st, err := migrate.Check(cmd.Context(), url)
			if err != nil {
				return err
			}
			if err := out.Print(cmd, st, "", func(w io.Writer) error { return printStatus(w, st) }); err != nil {
				return err
			}
			if st.Version > st.Known {
				return fmt.Errorf("the store's schema (version %d) is newer than this binary knows (%d): upgrade legate", st.Version, st.Known)
			}
			return nil
		},
	}
	out = cli.Add(cmd, "")
	return cmd
}

func printStatus(w io.Writer, st *migrate.Status) error {
	pending := "none"
	if st.Pending > 0 {
		pending = fmt.Sprintf("%d (applied at the next start)", st.Pending)
	}
	if err := cli.Fields(w, [][2]string{
		{"store", st.Store}, {"backend", st.Backend},
		{"schema version", fmt.Sprintf("%d of %d", st.Version, st.Known)}, {"pending migrations", pending},
	}); err != nil {
		return err
	}
	if len(st.Tables) == 0 {
		_, err := fmt.Fprintln(w, "\nno tables yet: the first start creates them")
		return err
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tROWS\tHOLDS")
	for _, t := range st.Tables {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", t.Table, t.Rows, t.What)
	}
	return tw.Flush()
}

func migrateCmd(r Resolver) *cobra.Command {
	var from, to string
	var force bool
	cmd := &cobra.Command{
		Use:   "migrate --to postgres://... [--from sqlite://PATH] [--force]",
		Short: "Copy the embedded store into PostgreSQL, for replicas",
		Long: `Copy every row of a SQLite store into a PostgreSQL one: connectors,
upstreams with their tool caches, pins, approvals (with their states and
outcomes), the audit log (with its ids), vault secrets (ciphertext as it
is: keep the same key ring on every replica), tokens and operation
records. The target's schema is created first.

Stop legate serve on the source first. Running it again resumes: rows
already in the target are kept as they are there. A target holding data
not copied from this source is refused unless --force is given.

--from defaults to the store --store or the environment names, or the
state directory's database.`,
		Example: `  legate store migrate --from sqlite:///var/lib/legate/legate.db --to postgres://legate@db:5432/legate`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" {
				var err error
				if from, err = r.url(); err != nil {
					return err
				}
			}
			path, ok := strings.CutPrefix(from, "sqlite://")
			if !ok && strings.Contains(from, "://") {
				return fmt.Errorf("--from %q: the source is a sqlite:// store", from)
			}
			if !ok {
				path = from
			}
			if !strings.HasPrefix(to, postgres.Scheme+"://") && !strings.HasPrefix(to, postgres.SchemeLong+"://") {
				return fmt.Errorf("--to %q: the target is a postgres:// store", postgres.Redacted(to))
			}
			dst, err := postgres.Open(cmd.Context(), to)
			if err != nil {
				return err
			}
			defer dst.Close()
			w := cmd.OutOrStdout()
			rep, err := migrate.Copy(cmd.Context(), path, dst, &migrate.Options{Force: force, Progress: func(c migrate.TableCount) {
				fmt.Fprintf(w, "%-16s %6d copied, %6d already there (%s)\n", c.Table, c.Copied, c.Kept, c.What)
			}})
			if errors.Is(err, migrate.ErrTargetInUse) {
				return fmt.Errorf("%w; --force copies into it anyway", err)
			}
			if err != nil {
				return err
			}
			verb := "copied"
			if rep.Resumed {
				verb = "copied (resumed)"
			}
			fmt.Fprintf(w, "%s %s into %s\nnext: start every replica with --store (or LEGATE_STORE) set to it and the same vault key ring\n",
				verb, rep.Source, postgres.Redacted(to))
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the SQLite store to copy, sqlite://PATH")
	cmd.Flags().StringVar(&to, "to", "", "the PostgreSQL store to copy into, postgres://...")
	cmd.Flags().BoolVar(&force, "force", false, "copy into a target that holds other data, keeping its rows")
	cmd.MarkFlagRequired("to")
	return cmd
}
