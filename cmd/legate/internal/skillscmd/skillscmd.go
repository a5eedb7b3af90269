// Package skillscmd is `legate skills`: the skills library of this
// machine (list, install, enable, disable, rm), kept in the state
// directory's skills folder, where the host connector reads it. The work
// is the library's (connectors/host/skills); this package only parses and prints.
package skillscmd

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/legate-mcp/legate/cmd/legate/internal/cli"
	"github.com/legate-mcp/legate/connectors/host/skills"
)

// New returns the `skills` command. The library is --dir, else stateSkills:
// the skills folder of the command's state directory, where the host
// connector of a server on it reads them.
func New(stateSkills func(*cobra.Command) (string, error)) *cobra.Command {
	var dir string
	lib := func(cmd *cobra.Command) (*skills.Library, error) {
		if dir != "" {
			return skills.Open(dir), nil
		}
		d, err := stateSkills(cmd)
		if err != nil {
			return nil, err
		}
		return skills.Open(d), nil
	}
	cmd := &cobra.Command{Use: "skills", Short: "The skills (Agent Skills procedures) installed on this machine"}
	cmd.PersistentFlags().StringVar(&dir, "dir", "", "skills directory (default <state dir>/skills)")
	cmd.AddCommand(
		listCmd(lib),
		&cobra.Command{
			Use: "install PATH|GIT-URL", Short: "Install the skills of a directory or git repository; they arrive disabled", Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				l, err := lib(cmd)
				if err != nil {
					return err
				}
				got, err := l.Install(cmd.Context(), args[0])
				for _, s := range got {
					fmt.Fprintf(cmd.OutOrStdout(), "installed %s (disabled: read its SKILL.md, then legate skills enable %s)\n", s.Name, s.Name)
					warn(cmd.ErrOrStderr(), s)
				}
				return err
			},
		},
		toggle("enable", "Enable a skill: its tools and its line in the instructions appear", true, lib),
		toggle("disable", "Disable a skill", false, lib),
		&cobra.Command{
			Use: "rm NAME", Short: "Remove an installed skill", Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				l, err := lib(cmd)
				if err != nil {
					return err
				}
				if err := l.Remove(args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", args[0])
				return nil
			},
		},
	)
	return cmd
}

func toggle(verb, short string, on bool, lib func(*cobra.Command) (*skills.Library, error)) *cobra.Command {
	return &cobra.Command{
		Use: verb + " NAME", Short: short, Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := lib(cmd)
			if err != nil {
				return err
			}
			if err := l.SetEnabled(args[0], on); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%sd %s\n", verb, args[0])
			return nil
		},
	}
}

func listCmd(lib func(*cobra.Command) (*skills.Library, error)) *cobra.Command {
	var out *cli.Flag
	cmd := &cobra.Command{
		Use: "list", Short: "List installed skills, with warnings about descriptions that will not get them chosen", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := lib(cmd)
			if err != nil {
				return err
			}
			skills, err := l.List()
			if err != nil {
				return err
			}
			for _, s := range skills {
				warn(cmd.ErrOrStderr(), s) // stderr: stdout is the document alone
			}
			empty := fmt.Sprintf("no skills in %s; add one with legate skills install PATH|GIT-URL", l.Dir())
			return out.Print(cmd, skills, empty, func(w io.Writer) error {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tENABLED\tSOURCE\tDESCRIPTION")
				for _, s := range skills {
					desc, _ := cut(s.Description, 70)
					fmt.Fprintf(tw, "%s\t%v\t%s\t%s\n", s.Name, s.Enabled, s.Source, desc)
				}
				return tw.Flush()
			})
		},
	}
	out = cli.Add(cmd, "")
	return cmd
}

func warn(w io.Writer, s skills.Skill) {
	if s.Err != "" {
		fmt.Fprintf(w, "error: %s: %s\n", s.Name, s.Err)
	}
	if s.Warning != "" {
		fmt.Fprintf(w, "warning: %s: %s\n", s.Name, s.Warning)
	}
}

func cut(s string, n int) (string, bool) {
	r := []rune(s)
	if len(r) <= n {
		return s, false
	}
	return string(r[:n-1]) + "…", true
}
