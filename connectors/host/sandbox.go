package host

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/legate-mcp/legate"
)

// DefaultShellPath is the PATH of sh_exec's commands when shell_env does
// not name one.
const DefaultShellPath = "/usr/local/bin:/usr/bin:/bin"

// sandboxSpec is what the sandbox trampoline applies to itself before it
// becomes the command (see sandbox_linux.go). It travels as JSON in the
// trampoline's arguments, never in its environment, which is the
// command's.
type sandboxSpec struct {
	Path     string   `json:"path"`
	Args     []string `json:"args"`
	Read     []string `json:"read,omitempty"`
	Write    []string `json:"write,omitempty"`
	Landlock bool     `json:"landlock,omitempty"`
	CPU      uint64   `json:"cpu,omitempty"` // seconds
	FileSize uint64   `json:"file_size,omitempty"`
	Memory   uint64   `json:"memory,omitempty"`
	Procs    uint64   `json:"procs,omitempty"`
}

// kernelLandlock is the kernel's Landlock ABI version, 0 without Landlock, and
// why not; looked up once.
var kernelLandlock = sync.OnceValues(landlockABI)

// noLandlock, set by tests, makes the connector behave as on a kernel
// without Landlock.
var noLandlock bool

// confined reports whether sh_exec's commands run confined by Landlock,
// and if not, why.
func confined() (bool, string) {
	if noLandlock {
		return false, "Landlock turned off for a test"
	}
	abi, why := kernelLandlock()
	return abi > 0, why
}

// warnUnconfined logs, once per instance built, that sh_exec runs without
// the kernel's confinement and what stands in for it.
func (c *Connector) warnUnconfined() {
	if !c.cfg.AllowShell {
		return
	}
	if ok, why := confined(); !ok {
		slog.Warn("sh_exec runs without kernel confinement: its commands can read and write whatever the OS user can; only the argument rules of shell_allowlist apply",
			"instance", c.id, "reason", why)
	}
}

// envName is a variable name shell_env may give.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// shellEnv is the environment of sh_exec's commands: empty but for what
// shell_env names, and PATH.
func (c *Connector) shellEnv() []string {
	var env []string
	path := false
	for _, e := range c.cfg.ShellEnv {
		k, v, set := strings.Cut(e, "=")
		if !set {
			var ok bool
			if v, ok = os.LookupEnv(k); !ok {
				continue
			}
		}
		path = path || k == "PATH"
		env = append(env, k+"="+v)
	}
	if !path {
		env = append(env, "PATH="+DefaultShellPath)
	}
	return env
}

// shellPath is the PATH sh_exec's commands see.
func (c *Connector) shellPath() string {
	for _, kv := range c.shellEnv() {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return v
		}
	}
	return DefaultShellPath
}

// lookPath finds name on path as the command's environment gives it, not
// Legate's own: the program found is the program run.
func lookPath(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative entry would depend on the working directory
		}
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// sandboxed is how sh_exec starts argv in dir: through the trampoline
// that confines it where the kernel can, with rlimits, and an environment
// holding only what shell_env names.
func (c *Connector) sandboxed(argv []string, dir string) launch {
	return func(ctx context.Context) (*exec.Cmd, error) {
		path, err := lookPath(argv[0], c.shellPath())
		if err != nil {
			return nil, legate.Errorf(legate.CodeNotFound, "host: %s: not found on PATH", argv[0])
		}
		ok, _ := confined()
		spec := &sandboxSpec{Path: path, Args: argv, Landlock: ok,
			Read:     c.cfg.ShellReadDirs,
			Write:    append([]string{c.jail.real}, c.cfg.ShellWriteDirs...),
			CPU:      uint64(max(time.Duration(c.cfg.ShellMaxCPU)/time.Second, 1)),
			FileSize: uint64(max(c.cfg.ShellMaxFileBytes, 0)),
			Memory:   uint64(max(c.cfg.ShellMaxMemoryBytes, 0)),
			Procs:    uint64(max(c.cfg.ShellMaxProcesses, 0)),
		}
		cmd, err := sandboxCommand(ctx, spec)
		if err != nil {
			return nil, legate.Errorf(legate.CodeTransient, "host: starting %s: %v", argv[0], err)
		}
		cmd.Dir = dir
		cmd.Env = c.shellEnv()
		return cmd, nil
	}
}

// protectedDirs are the directories no sh_exec command may reach: the
// skills library and the state directory (its keys and database), as
// far as this process knows where they are.
func (c *Connector) protectedDirs() []string {
	var out []string
	for _, d := range []string{c.cfg.SkillsDir, os.Getenv("LEGATE_STATE_DIR")} {
		if d != "" && filepath.IsAbs(d) {
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}

// validateShell checks the shell's confinement settings.
func (c *Connector) validateShell() []error {
	var errs []error
	for _, e := range c.cfg.ShellEnv {
		k, _, _ := strings.Cut(e, "=")
		switch {
		case !envName.MatchString(k):
			errs = append(errs, legate.Invalid("shell_env", "%q: give NAME or NAME=VALUE", e))
		case strings.HasPrefix(k, "LEGATE_"):
			errs = append(errs, legate.Invalid("shell_env", "%s: Legate's own settings are not passed to commands", k))
		}
	}
	for i, d := range append(append([]string{}, c.cfg.ShellReadDirs...), c.cfg.ShellWriteDirs...) {
		field := "shell_read_dirs"
		if i >= len(c.cfg.ShellReadDirs) {
			field = "shell_write_dirs"
		}
		if !filepath.IsAbs(d) || filepath.Clean(d) == "/" {
			errs = append(errs, legate.Invalid(field, "%q: give absolute directories other than /", d))
			continue
		}
		for _, p := range c.protectedDirs() {
			if within(filepath.Clean(d), p) {
				errs = append(errs, legate.Invalid(field, "%s holds %s, which sh_exec's commands must not reach", d, p))
			}
		}
	}
	if c.cfg.ShellMaxCPU < legate.Duration(time.Second) {
		errs = append(errs, legate.Invalid("shell_max_cpu", "must be at least 1s"))
	}
	for _, f := range []struct {
		name string
		n    int
	}{{"shell_max_file_bytes", c.cfg.ShellMaxFileBytes}, {"shell_max_memory_bytes", c.cfg.ShellMaxMemoryBytes}, {"shell_max_processes", c.cfg.ShellMaxProcesses}} {
		if f.n < 0 {
			errs = append(errs, legate.Invalid(f.name, "must not be negative (0: no limit), got %d", f.n))
		}
	}
	return errs
}

// insideWorkspace reports whether abs (clean) lies in the workspace, by
// its configured path or its resolved one. It reads the path as written:
// a symlink inside that leads out is the kernel's to stop.
func (c *Connector) insideWorkspace(abs string) bool {
	return within(c.jail.path, abs) || (c.jail.real != "" && within(c.jail.real, abs))
}
