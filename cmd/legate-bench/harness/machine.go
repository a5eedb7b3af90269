// Package harness is what legate-bench's scenarios and its soak share:
// the processes they start (procs.go), the servers those run, legate-bench's
// hidden subcommands (servers.go), the load generator and its clients
// (load.go), and the description of the machine every report begins with.
package harness

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// MachineLine describes this machine and toolchain.
func MachineLine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for l := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	kernel := ""
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = ", Linux " + strings.TrimSpace(string(b))
	}
	commit := ""
	if out, err := exec.Command("git", "describe", "--always", "--dirty").Output(); err == nil {
		commit = ", commit " + strings.TrimSpace(string(out))
	}
	return fmt.Sprintf("Machine: %d × %s (nproc %d)%s, %s %s/%s%s.", runtime.NumCPU(), model, runtime.NumCPU(), kernel,
		runtime.Version(), runtime.GOOS, runtime.GOARCH, commit)
}

// LoadAvg is the 1-minute load average: other work on the machine skews
// absolute numbers (ratios, measured back to back, less so).
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// FirstLine is s up to its first newline: the gist of an error message.
func FirstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
