//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// sandboxArg, as the first argument of this very binary, makes it the
// sandbox trampoline instead of Legate.
//
// Why a trampoline: rlimits set with setrlimit and a Landlock domain
// belong to the process that sets them, and must be in place before the
// command's first instruction. Go (CGO off) has no hook between fork and
// exec, and setting them in Legate itself would confine Legate. prlimit(2)
// on the child after Start could set the rlimits, but leaves a window in
// which the command already runs unlimited, and cannot apply Landlock at
// all. So sh_exec starts Legate's own executable (/proc/self/exe, the
// binary running now even if the file was replaced since) with this
// argument and a spec; init below sees it before anything else runs,
// applies the rlimits and the Landlock rules to its own process, and
// execve's the command, which inherits both and can never shed them.
const sandboxArg = "__legate-sandbox"

func init() {
	if len(os.Args) == 3 && os.Args[1] == sandboxArg {
		os.Exit(sandboxMain(os.Args[2]))
	}
}

// sandboxMain confines this process as spec says and becomes its
// command. It returns only on failure: 126, the shell's "cannot execute",
// with the reason on stderr. A Landlock spec that cannot be applied fails
// closed: the command does not run.
func sandboxMain(arg string) int {
	var s Spec
	if err := json.Unmarshal([]byte(arg), &s); err != nil || len(s.Args) == 0 {
		fmt.Fprintf(os.Stderr, "legate sandbox: bad spec: %v\n", err)
		return 126
	}
	runtime.LockOSThread()
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stderr, "legate sandbox: %s: %s: %v\n", s.Args[0], what, err)
		return 126
	}
	for _, l := range []struct {
		res int
		cur uint64
		max uint64
	}{
		// The soft CPU limit sends SIGXCPU, the hard one a second later SIGKILL.
		{unix.RLIMIT_CPU, s.CPU, s.CPU + 1},
		{unix.RLIMIT_FSIZE, s.FileSize, s.FileSize},
		{unix.RLIMIT_AS, s.Memory, s.Memory},
		{unix.RLIMIT_NPROC, s.Procs, s.Procs},
	} {
		if l.cur == 0 {
			continue
		}
		if err := unix.Setrlimit(l.res, &unix.Rlimit{Cur: l.cur, Max: l.max}); err != nil {
			return fail("setrlimit", err)
		}
	}
	if s.Landlock {
		if err := landlockSelf(&s); err != nil {
			return fail("landlock", err)
		}
	}
	err := syscall.Exec(s.Path, s.Args, os.Environ())
	return fail("exec", err)
}

// landlockSelf confines this process and whatever it executes: read and
// execute beneath s.Read, everything beneath s.Write (renames within it
// included), the harmless character devices, and nothing else — no
// /proc, no home, no state directory, no temporary directory unless
// named. Signals and abstract unix sockets cannot reach processes outside
// the domain, Legate among them. BestEffort keeps what an older kernel
// knows of these rights; the network is left alone.
func landlockSelf(s *Spec) error {
	rules := []landlock.Rule{
		landlock.RODirs(s.Read...).IgnoreIfMissing(),
		landlock.RWDirs(s.Write...).WithRefer(),
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full").IgnoreIfMissing(),
		landlock.ROFiles("/dev/random", "/dev/urandom").IgnoreIfMissing(),
	}
	if err := landlock.V11.BestEffort().RestrictPaths(rules...); err != nil {
		return err
	}
	return landlock.V11.BestEffort().RestrictScoped()
}

// Command is the trampoline's command for spec.
func Command(ctx context.Context, spec *Spec) (*exec.Cmd, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "/proc/self/exe", sandboxArg, string(b))
	cmd.Args[0] = spec.Args[0]
	return cmd, nil
}

// landlockABI asks the kernel which Landlock ABI it offers.
func landlockABI() (int, string) {
	v, err := llsys.LandlockGetABIVersion()
	switch {
	case errors.Is(err, syscall.ENOSYS):
		return 0, "the kernel has no Landlock (before Linux 5.13, or built without it)"
	case errors.Is(err, syscall.EOPNOTSUPP):
		return 0, "Landlock is not enabled at boot (add landlock to the lsm= kernel parameter)"
	case err != nil:
		return 0, "Landlock: " + err.Error()
	}
	return v, fmt.Sprintf("Landlock ABI %d", v)
}
