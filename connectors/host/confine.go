package host

import (
	"os"
	"path/filepath"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors/host/sandbox"
)

// DefaultShellPath is the PATH of sh_exec's commands when shell_env does
// not name one.
const DefaultShellPath = sandbox.DefaultPath

// sandboxed is how sh_exec starts argv in dir: through the trampoline
// that confines it where the kernel can, with rlimits, and an environment
// holding only what shell_env names.
func (c *Connector) sandboxed(argv []string, dir string) sandbox.Launch {
	return sandbox.Start(argv, dir, sandbox.Env(c.cfg.ShellEnv), sandbox.Spec{
		Read:     c.cfg.ShellReadDirs,
		Write:    append([]string{c.jail.Real()}, c.cfg.ShellWriteDirs...),
		CPU:      uint64(max(time.Duration(c.cfg.ShellMaxCPU)/time.Second, 1)),
		FileSize: uint64(max(c.cfg.ShellMaxFileBytes, 0)),
		Memory:   uint64(max(c.cfg.ShellMaxMemoryBytes, 0)),
		Procs:    uint64(max(c.cfg.ShellMaxProcesses, 0)),
	})
}

// protectedDirs are the directories no sh_exec command may reach: the
// skills library and the state directory (its keys and database): the one
// the instance was built in, and $LEGATE_STATE_DIR's.
func protectedDirs(cfg *Config, stateDir string) []string {
	var out []string
	for _, d := range []string{cfg.SkillsDir, stateDir, os.Getenv("LEGATE_STATE_DIR")} {
		if d != "" && filepath.IsAbs(d) {
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}

// validateShell checks the shell's confinement settings.
func validateShell(c *Config, stateDir string) []error {
	var errs []error
	for _, bad := range sandbox.CheckEnv(c.ShellEnv) {
		errs = append(errs, legate.Invalid("shell_env", "%s", bad))
	}
	for i, d := range append(append([]string{}, c.ShellReadDirs...), c.ShellWriteDirs...) {
		field := map[bool]string{true: "shell_read_dirs", false: "shell_write_dirs"}[i < len(c.ShellReadDirs)]
		for _, bad := range sandbox.CheckDir(d, protectedDirs(c, stateDir)) {
			errs = append(errs, legate.Invalid(field, "%s", bad))
		}
	}
	if c.ShellMaxCPU < legate.Duration(time.Second) {
		errs = append(errs, legate.Invalid("shell_max_cpu", "must be at least 1s"))
	}
	for name, n := range map[string]int{"shell_max_file_bytes": c.ShellMaxFileBytes, "shell_max_memory_bytes": c.ShellMaxMemoryBytes, "shell_max_processes": c.ShellMaxProcesses} {
		if n < 0 {
			errs = append(errs, legate.Invalid(name, "must not be negative (0: no limit), got %d", n))
		}
	}
	return errs
}
