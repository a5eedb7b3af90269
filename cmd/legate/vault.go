package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
	"github.com/legate-mcp/legate/vault"
)

func vaultCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "vault",
		Short: "Secrets kept encrypted in the store, for {vault: NAME} credentials",
		Long: `Secrets kept encrypted in the store. A connector credential {vault: NAME}
(or --credential token=vault:NAME) resolves, at each call, to the calling
tenant's secret NAME when it has one, else to the shared one (no --tenant).

Keys come from $LEGATE_MASTER_KEY (ID:BASE64 entries, comma-separated, the
first the primary), else the file $LEGATE_KEY_FILE names, else vault.key in
the state directory (created on first use).`,
	}
	cmd.AddCommand(vaultSetCmd(g), vaultListCmd(g), vaultRemoveCmd(g), vaultRotateCmd(g))
	return cmd
}

func vaultSetCmd(g *globals) *cobra.Command {
	var tenant string
	cmd := &cobra.Command{
		Use:   "set NAME [--tenant T]",
		Short: "Store a new version of a secret, read from standard input (or typed, not echoed)",
		Example: `  printf %s "$TOKEN" | legate vault set github-token
  legate vault set github-token --tenant acme     # prompts, twice, without echo`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ctx := cmd.Context()
			name := argv[0]
			if err := vault.ValidateName(tenant, name); err != nil {
				return err
			}
			e, err := g.open(ctx)
			if err != nil {
				return err
			}
			defer e.Close()
			value, err := readSecret(ctx, cmd, vault.Describe(tenant, name))
			if err != nil {
				return err
			}
			defer clear(value)
			info, err := e.vault.Set(ctx, tenant, name, value)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "stored %s version %d (key %s); calls use it from now on\n", vault.Describe(tenant, name), info.Version, info.KeyID)
			return nil
		},
	}
	cmd.Flags().StringVar(&tenant, "tenant", "", "the tenant the secret belongs to (default: shared by every tenant)")
	return cmd
}

// readSecret reads a secret value: typed at a terminal without echo (and
// confirmed), else all of standard input, one trailing newline trimmed. A
// value is never taken from the command line, where ps and shell history
// would see it.
func readSecret(ctx context.Context, cmd *cobra.Command, what string) ([]byte, error) {
	in := cmd.InOrStdin()
	if f, ok := in.(*os.File); ok && isTerminal(f) {
		fmt.Fprintf(cmd.ErrOrStderr(), "Value of %s: ", what)
		v, err := readNoEcho(ctx, f)
		fmt.Fprintln(cmd.ErrOrStderr())
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "Again: ")
		again, err := readNoEcho(ctx, f)
		fmt.Fprintln(cmd.ErrOrStderr())
		defer clear(again)
		if err != nil {
			clear(v)
			return nil, err
		}
		if !bytes.Equal(v, again) {
			clear(v)
			return nil, errors.New("the two values differ; nothing stored")
		}
		if len(v) == 0 {
			return nil, errors.New("empty value; nothing stored")
		}
		return v, nil
	}
	v, err := io.ReadAll(io.LimitReader(in, vault.MaxValueSize+3))
	if err != nil {
		return nil, fmt.Errorf("reading the value from standard input: %w", err)
	}
	v = bytes.TrimSuffix(v, []byte("\n"))
	v = bytes.TrimSuffix(v, []byte("\r"))
	switch {
	case len(v) == 0:
		return nil, fmt.Errorf("no value on standard input; pipe it in (printf %%s \"$VALUE\" | %s) or run at a terminal to type it", strings.TrimSuffix(cmd.UseLine(), " [flags]"))
	case len(v) > vault.MaxValueSize:
		clear(v)
		return nil, fmt.Errorf("the value is over %d bytes", vault.MaxValueSize)
	}
	return v, nil
}

func vaultListCmd(g *globals) *cobra.Command {
	var tenant string
	var all bool
	var o *cli.Flag
	cmd := &cobra.Command{
		Use:   "list [--tenant T] [--all] [-o table|json|yaml]",
		Short: "List secrets: names, tenants, versions, dates and key ids — never values",
		Args:  cobra.NoArgs,
		RunE: g.withEnv(func(cmd *cobra.Command, _ []string, e *env) error {
			infos, err := e.vault.List(cmd.Context())
			if err != nil {
				return err
			}
			byTenant := cmd.Flags().Changed("tenant")
			var out []vault.Info
			for i, in := range infos {
				if byTenant && in.Tenant != tenant {
					continue
				}
				// Without --all, only the newest version of each secret (the list
				// is sorted by tenant, name, version).
				if !all && i+1 < len(infos) && infos[i+1].Tenant == in.Tenant && infos[i+1].Name == in.Name {
					continue
				}
				out = append(out, in)
			}
			return o.Print(cmd, out, "no secrets; store one with `legate vault set NAME`", func(w io.Writer) error {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tTENANT\tVERSION\tKEY\tSET AT")
				for _, in := range out {
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", in.Name, cli.OrDash(in.Tenant), in.Version, in.KeyID, cli.LocalTime(in.CreatedAt))
				}
				return tw.Flush()
			})
		}),
	}
	cmd.Flags().StringVar(&tenant, "tenant", "", "only this tenant's secrets (\"\" for the shared ones)")
	cmd.Flags().BoolVar(&all, "all", false, "every version, not only the newest")
	o = cli.Add(cmd, cli.JSON)
	return cmd
}

func vaultRemoveCmd(g *globals) *cobra.Command {
	var tenant string
	cmd := &cobra.Command{
		Use:     "rm NAME [--tenant T]",
		Aliases: []string{"remove"},
		Short:   "Remove a secret, every version of it",
		Args:    cobra.ExactArgs(1),
		RunE: g.withEnv(func(cmd *cobra.Command, argv []string, e *env) error {
			n, err := e.vault.Delete(cmd.Context(), tenant, argv[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %s (%d versions)\n", vault.Describe(tenant, argv[0]), n)
			return nil
		}),
	}
	cmd.Flags().StringVar(&tenant, "tenant", "", "the tenant the secret belongs to (default: the shared secret)")
	return cmd
}

func vaultRotateCmd(g *globals) *cobra.Command {
	var batch int
	cmd := &cobra.Command{
		Use:   "rotate [--batch-size N]",
		Short: "Make a new primary key, re-wrap every data key with it, retire the old key",
		Long: `Make a new primary key-encryption key and re-wrap every secret's data key
with it (the values themselves are not decrypted), in batches of one
transaction each; then drop the old key from the ring once no secret uses it.

Interrupted (Ctrl-C, a crash), it is resumed by running it again: a run that
finds secrets still wrapped by an older key makes no new key and continues.

With the key file (vault.key or $LEGATE_KEY_FILE) one run does everything;
running servers pick up the new key from the file. With $LEGATE_MASTER_KEY,
which legate cannot change, it takes two runs: the first makes a key and
prints the value to set (changing nothing else); set it for every process
and restart them, then run it again to re-wrap; it then names the old key
to drop from the variable.`,
		Args: cobra.NoArgs,
		RunE: g.withEnv(func(cmd *cobra.Command, _ []string, e *env) error {
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			src := e.vault.Source()
			last := time.Now()
			rep, err := e.vault.Rotate(ctx, &vault.RotateOptions{BatchSize: batch, Progress: func(p vault.RotateProgress) {
				if p.Remaining == 0 || time.Since(last) > time.Second {
					fmt.Fprintf(out, "re-wrapped %d data keys with %s, %d to go\n", p.Rewrapped, p.Primary, p.Remaining)
					last = time.Now()
				}
			}})
			if rep != nil && rep.SetEnv != "" {
				printSetEnv(out, src, rep)
				return nil
			}
			if err != nil {
				if rep != nil && errors.Is(err, context.Canceled) {
					return fmt.Errorf("interrupted after re-wrapping %d data keys with %s (%d still wrapped by older keys); run legate vault rotate again to continue", rep.Rewrapped, rep.Primary, rep.Remaining)
				}
				return err
			}
			switch {
			case rep.NewKey != "":
				fmt.Fprintf(out, "made key %s, the new primary in %s\n", rep.NewKey, src)
			default:
				fmt.Fprintf(out, "continued the unfinished rotation to key %s\n", rep.Primary)
			}
			fmt.Fprintf(out, "re-wrapped %d data keys with %s; the secret values were not decrypted\n", rep.Rewrapped, rep.Primary)
			if rep.Remaining > 0 {
				return fmt.Errorf("%d secret versions are still wrapped by an older key (set meanwhile by a process with an older key ring); run legate vault rotate again", rep.Remaining)
			}
			switch {
			case len(rep.Retired) == 0:
			case src.Writable():
				fmt.Fprintf(out, "retired %s: no secret uses it; %s now holds %s\n", strings.Join(rep.Retired, ", "), src, strings.Join(rep.Kept, ", "))
			default:
				fmt.Fprintf(out, "no secret uses %s any more: remove it from %s, keeping only %s (the first entry of its value)\n",
					strings.Join(rep.Retired, ", "), src, strings.Join(rep.Kept, ", "))
			}
			return nil
		}),
	}
	cmd.Flags().IntVar(&batch, "batch-size", vault.DefaultBatchSize, "data keys re-wrapped per transaction")
	return cmd
}

// printSetEnv tells the operator of a ring from the environment what to do
// with the key the first rotation run made. Only here does key material
// reach the output: the operator must have it to set the variable.
func printSetEnv(out io.Writer, src vault.KeySource, rep *vault.RotateReport) {
	fmt.Fprintf(out, "made key %s. %s comes from the environment, so legate cannot change it, and no secret was changed yet.\n\n", rep.NewKey, src)
	fmt.Fprintf(out, "1. Set %s to this value (the new key first, the current one kept to decrypt) for every process that uses the vault, and restart them:\n\n", src)
	fmt.Fprintf(out, "%s\n\n", rep.SetEnv)
	fmt.Fprintf(out, "2. Run legate vault rotate again, with it set, to re-wrap the %d stored data keys; it then names the old key to drop.\n", rep.Remaining)
}
