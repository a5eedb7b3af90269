// Package sandbox runs the host connector's shell commands confined:
// started through a trampoline of the running binary that applies rlimits
// and Landlock to itself and then becomes the command (see
// sandbox_linux.go), in an environment holding only what the operator
// names, in a process group killed whole, with output capped; and it
// holds the per-program table of refused options (argrules.go).
//
// A binary that links this package answers to the trampoline's argument
// in its init, before anything else runs.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// DefaultPath is the PATH of a command whose environment names none.
const DefaultPath = "/usr/local/bin:/usr/bin:/bin"

// Spec is what the trampoline applies to itself before it becomes the
// command. It travels as JSON in the trampoline's arguments, never in its
// environment, which is the command's.
type Spec struct {
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

// kernelLandlock is the kernel's Landlock ABI version, 0 without
// Landlock, and why not; looked up once.
var kernelLandlock = sync.OnceValues(landlockABI)

// NoLandlock, set by tests, makes Confined report no Landlock.
var NoLandlock bool

// Confined reports whether commands run confined by Landlock, and if
// not, why.
func Confined() (bool, string) {
	if NoLandlock {
		return false, "Landlock turned off for a test"
	}
	abi, why := kernelLandlock()
	return abi > 0, why
}

// EnvName matches a variable name an environment entry may give.
var EnvName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Env is a command's whole environment from the operator's entries:
// NAME passes that variable from this process's environment when set,
// NAME=VALUE sets it; PATH is DefaultPath unless named.
func Env(entries []string) []string {
	var env []string
	path := false
	for _, e := range entries {
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
		env = append(env, "PATH="+DefaultPath)
	}
	return env
}

// PathOf is the PATH in env.
func PathOf(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return v
		}
	}
	return DefaultPath
}

// LookPath finds name on path as the command's environment gives it, not
// this process's own: the program found is the program run.
func LookPath(name, path string) (string, error) {
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

// Launch makes the command a call runs, bound to ctx.
type Launch func(ctx context.Context) (*exec.Cmd, error)

// Result is what a command did.
type Result struct {
	ExitCode  int    `json:"exit_code" jsonschema:"The exit status; -1 when the command was killed"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	TimedOut  bool   `json:"timed_out,omitempty" jsonschema:"The time limit passed and the command's process group was killed"`
	Truncated bool   `json:"truncated,omitempty" jsonschema:"stdout or stderr was cut at max_tool_output_bytes"`
	Shell     bool   `json:"shell" jsonschema:"The command ran under sh -c (no allowlist)"`
}

// ErrStart wraps a failure to run a command at all (not its exit status).
var ErrStart = errors.New("sandbox: the command could not run")

// Run runs the command start makes in a process group of its own, killed
// whole when timeout passes or ctx ends, and after the command exits (a
// child left running in the background goes with it). Its stdout and
// stderr are each capped at budget/2 bytes.
func Run(ctx context.Context, timeout time.Duration, budget int, start Launch) (*Result, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd, err := start(ctx)
	if err != nil {
		return nil, err
	}
	stdout, stderr := &capBuf{max: budget / 2}, &capBuf{max: budget / 2}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	ownGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Run()
	killGroup(cmd)
	res := &Result{ExitCode: cmd.ProcessState.ExitCode(), Stdout: stdout.String(), Stderr: stderr.String(), Truncated: stdout.cut || stderr.cut}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		res.TimedOut, res.ExitCode = true, -1
		res.Stderr += fmt.Sprintf("\n[killed after %s]", timeout)
		return res, nil
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) {
		return nil, fmt.Errorf("%w: %v", ErrStart, err)
	}
	return res, nil
}

// capBuf keeps the first max bytes written to it and notes that more came.
type capBuf struct {
	b   []byte
	max int
	cut bool
}

func (w *capBuf) Write(p []byte) (int, error) {
	n := len(p) // all of it is taken, kept or not: a short write would fail the copy
	if room := w.max - len(w.b); len(p) > room {
		w.cut = true
		p = p[:max(room, 0)]
	}
	w.b = append(w.b, p...)
	return n, nil
}

func (w *capBuf) String() string {
	s := strings.ToValidUTF8(string(w.b), "")
	if w.cut {
		s += "\n[output cut at max_tool_output_bytes]"
	}
	return s
}

// ErrNotFound is returned by a Launch whose program is not on its PATH.
var ErrNotFound = errors.New("not found on PATH")

// Start is how a command starts argv in dir confined: the program looked
// up on env's PATH, then the trampoline applying spec (its Path, Args and
// Landlock filled in here), env its whole environment.
func Start(argv []string, dir string, env []string, spec Spec) Launch {
	return func(ctx context.Context) (*exec.Cmd, error) {
		path, err := LookPath(argv[0], PathOf(env))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", argv[0], ErrNotFound)
		}
		spec.Path, spec.Args = path, argv
		spec.Landlock, _ = Confined()
		cmd, err := Command(ctx, &spec)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrStart, err)
		}
		cmd.Dir, cmd.Env = dir, env
		return cmd, nil
	}
}

// Direct is how a command starts argv in dir unconfined, found on this
// process's PATH, with env as its environment.
func Direct(argv []string, dir string, env []string) Launch {
	return func(ctx context.Context) (*exec.Cmd, error) {
		path, err := exec.LookPath(argv[0])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", argv[0], ErrNotFound)
		}
		cmd := exec.CommandContext(ctx, path, argv[1:]...)
		cmd.Args[0] = argv[0]
		cmd.Dir, cmd.Env = dir, env
		return cmd, nil
	}
}

// CheckEnv says what is wrong with each environment entry (NAME or
// NAME=VALUE); this process's own LEGATE_* settings cannot be named.
func CheckEnv(entries []string) []string {
	var bad []string
	for _, e := range entries {
		k, _, _ := strings.Cut(e, "=")
		switch {
		case !EnvName.MatchString(k):
			bad = append(bad, fmt.Sprintf("%q: give NAME or NAME=VALUE", e))
		case strings.HasPrefix(k, "LEGATE_"):
			bad = append(bad, k+": Legate's own settings are not passed to commands")
		}
	}
	return bad
}

// CheckDir says what is wrong with d as a directory a command may reach:
// it must be absolute, not /, and hold none of protected (clean,
// absolute).
func CheckDir(d string, protected []string) []string {
	if !filepath.IsAbs(d) || filepath.Clean(d) == "/" {
		return []string{fmt.Sprintf("%q: give absolute directories other than /", d)}
	}
	var bad []string
	for _, p := range protected {
		if rel, err := filepath.Rel(filepath.Clean(d), p); err == nil && filepath.IsLocal(rel) || rel == "." {
			bad = append(bad, fmt.Sprintf("%s holds %s, which commands must not reach", d, p))
		}
	}
	return bad
}

// WarnUnconfined logs that the commands of instance run without the
// kernel's confinement, and why, when they do.
func WarnUnconfined(instance string) {
	if ok, why := Confined(); !ok {
		slog.Warn("sh_exec runs without kernel confinement: its commands can read and write whatever the OS user can; only the argument rules of shell_allowlist apply",
			"instance", instance, "reason", why)
	}
}
