package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/host/sandbox"
	"github.com/legate-mcp/legate/connectors/host/workspace"
)

type execArgs struct {
	Command        string `json:"command" jsonschema:"The command line. With a shell allowlist it is split on spaces and run directly: no pipes, redirection, quoting, globbing or variables"`
	Dir            string `json:"dir,omitempty" jsonschema:"Working directory inside the workspace (default: the workspace)"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"Time limit in seconds, at most the configured shell_timeout (the default)"`
}

// ExecResult is sh_exec's result.
type ExecResult = sandbox.Result

type whichArgs struct {
	Name string `json:"name" jsonschema:"Program name to look for on PATH"`
}

// WhichResult is sh_which's result.
type WhichResult struct {
	Name  string `json:"name"`
	Found bool   `json:"found"`
	Path  string `json:"path,omitempty"`
}

func (c *Connector) shellTools() []connectors.Tool {
	how := "Commands go to sh -c."
	if len(c.cfg.ShellAllowlist) > 0 {
		how = "Only these programs, run directly without a shell (no pipes, &&, redirection, quotes or globs): " + strings.Join(c.cfg.ShellAllowlist, ", ") + "."
	}
	return []connectors.Tool{
		connectors.Returning[ExecResult](connectors.NewTool("sh_exec", "Run a command in the workspace and return its exit code and output. "+how, legate.ClassDestructive, c.shExec)),
		connectors.Returning[WhichResult](connectors.NewTool("sh_which", "Check whether a program is installed (on the PATH sh_exec's commands get).", legate.ClassRead, c.shWhich)),
	}
}

// metachars are the characters a shell gives meaning to; under an
// allowlist a command holding any is refused rather than half-checked.
const metachars = "|&;<>()$`\\\"'*?[]{}~#!\n\r\x00"

// shellCommand is the argv to run for command, or why it is refused.
func (c *Connector) shellCommand(command string) ([]string, error) {
	if strings.TrimSpace(command) == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: command is empty")
	}
	if len(c.cfg.ShellAllowlist) == 0 {
		for _, w := range strings.FieldsFunc(command, func(r rune) bool { return r == ' ' || r == '\t' || strings.ContainsRune(metachars, r) }) {
			if slices.Contains(c.cfg.ShellDenylist, filepath.Base(w)) {
				return nil, legate.Errorf(legate.CodePermissionDenied, "host: %s is on the shell denylist", filepath.Base(w))
			}
		}
		return []string{"sh", "-c", command}, nil
	}
	if i := strings.IndexAny(command, metachars); i >= 0 {
		return nil, legate.Errorf(legate.CodePermissionDenied, "host: %q is a shell metacharacter; with a shell allowlist commands run without a shell, one program at a time", command[i:i+1])
	}
	argv := strings.Fields(command)
	prog := argv[0]
	switch {
	case slices.Contains(c.cfg.ShellDenylist, filepath.Base(prog)):
		return nil, legate.Errorf(legate.CodePermissionDenied, "host: %s is on the shell denylist", filepath.Base(prog))
	case strings.Contains(prog, "/"):
		return nil, legate.Errorf(legate.CodePermissionDenied, "host: give the program's name, not a path: %s", prog)
	case !slices.Contains(c.cfg.ShellAllowlist, prog):
		return nil, legate.Errorf(legate.CodePermissionDenied, "host: %s is not on the shell allowlist (%s)", prog, strings.Join(c.cfg.ShellAllowlist, ", "))
	}
	ok, _ := sandbox.Confined()
	if err := sandbox.CheckArgs(prog, argv[1:], ok, c.jail.Inside); err != nil {
		return nil, err
	}
	return argv, nil
}

func (c *Connector) shExec(ctx context.Context, _ *connectors.Call, in *execArgs) (*legate.Result, error) {
	argv, err := c.shellCommand(in.Command)
	if err != nil {
		return nil, err
	}
	dir, err := c.workdir(in.Dir)
	if err != nil {
		return nil, err
	}
	timeout := time.Duration(c.cfg.ShellTimeout)
	if in.TimeoutSeconds < 0 {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: timeout_seconds must not be negative")
	}
	if t := time.Duration(in.TimeoutSeconds) * time.Second; t > 0 && t < timeout {
		timeout = t
	}
	res, err := c.run(ctx, argv[0], timeout, c.sandboxed(argv, dir))
	if err != nil {
		return nil, err
	}
	res.Shell = len(c.cfg.ShellAllowlist) == 0
	return &legate.Result{Structured: res}, nil
}

// workdir is the absolute directory a command starts in: p resolved inside
// the workspace.
func (c *Connector) workdir(p string) (string, error) {
	root, err := c.jail.Open()
	if err != nil {
		return "", err
	}
	r, err := c.jail.Rel(p)
	if err != nil {
		return "", err
	}
	st, err := root.Stat(r)
	if err != nil {
		return "", workspace.FSError("dir", p, err)
	}
	if !st.IsDir() {
		return "", legate.Errorf(legate.CodeInvalidArgument, "host: %s is not a directory", p)
	}
	real := c.jail.Real()
	abs, err := filepath.EvalSymlinks(filepath.Join(real, r))
	if err != nil || !workspace.Within(real, abs) {
		return "", legate.Errorf(legate.CodePermissionDenied, "host: dir %s: the path leads outside the workspace", p)
	}
	return abs, nil
}

// run runs the command start makes, its output capped at the result's
// budget (see sandbox.Run).
func (c *Connector) run(ctx context.Context, name string, timeout time.Duration, start sandbox.Launch) (*ExecResult, error) {
	res, err := sandbox.Run(ctx, timeout, c.cfg.budget(), start)
	switch {
	case errors.Is(err, sandbox.ErrNotFound):
		return nil, legate.Errorf(legate.CodeNotFound, "host: %v", err)
	case err != nil:
		return nil, legate.Errorf(legate.CodeTransient, "host: running %s: %v", name, err)
	}
	return res, nil
}

// childEnv is this process's environment without the variables that look
// like credentials or that configure Legate itself (its keys among them):
// what pkg_install's package manager gets. (sh_exec's commands get only
// what shell_env names.)
func childEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if secretName().MatchString(k) || strings.HasPrefix(k, "LEGATE_") || k == "PWD" || k == "OLDPWD" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func (c *Connector) shWhich(_ context.Context, _ *connectors.Call, in *whichArgs) (*legate.Result, error) {
	if in.Name == "" || strings.ContainsAny(in.Name, "/"+metachars+" \t") {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "host: %q is not a program name", in.Name)
	}
	out := &WhichResult{Name: in.Name}
	if p, err := sandbox.LookPath(in.Name, sandbox.PathOf(sandbox.Env(c.cfg.ShellEnv))); err == nil {
		out.Found, out.Path = true, p
	}
	return &legate.Result{Structured: out}, nil
}
