package host

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/host/sandbox"
)

type installArgs struct {
	Packages []string `json:"packages" jsonschema:"Package names to install, as this machine's package manager spells them; no flags"`
}

// InstallResult is pkg_install's result.
type InstallResult struct {
	Manager  string   `json:"manager"`
	Command  []string `json:"command" jsonschema:"The argv that ran"`
	ExitCode int      `json:"exit_code"`
	Output   string   `json:"output"`
	TimedOut bool     `json:"timed_out,omitempty"`
}

// packageName is what a package name must look like: no flag, no path, no
// shell; a version (pkg=1.2), an architecture (pkg:amd64) or a tap
// (owner/tap/formula) is allowed.
var packageName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+:@=-]{0,127}(/[A-Za-z0-9][A-Za-z0-9._+@-]{0,63}){0,2}$`)
})

// managers are the package managers pkg_install knows, in the order they
// are looked for, with the argv that installs without asking.
var managers = []struct {
	name string
	argv []string
	sudo bool
}{
	{"apt-get", []string{"apt-get", "install", "-y", "--no-install-recommends"}, true},
	{"dnf", []string{"dnf", "install", "-y"}, true},
	{"yum", []string{"yum", "install", "-y"}, true},
	{"zypper", []string{"zypper", "--non-interactive", "install"}, true},
	{"apk", []string{"apk", "add", "--no-interactive"}, true},
	{"pacman", []string{"pacman", "-S", "--noconfirm", "--needed"}, true},
	{"brew", []string{"brew", "install"}, false},
}

// geteuid is os.Geteuid; tests make the process look unprivileged.
var geteuid = os.Geteuid

func (c *Connector) installTool() connectors.Tool {
	desc := "Install packages with this machine's package manager (apt, dnf, yum, zypper, apk, pacman or brew), through sudo -n when not root. Names only, no flags"
	if len(c.cfg.InstallAllowlist) > 0 {
		desc += "; allowed: " + strings.Join(c.cfg.InstallAllowlist, ", ")
	}
	return connectors.Returning[InstallResult](connectors.NewTool("pkg_install", desc+".", legate.ClassWrite, c.pkgInstall))
}

// installCommand is the argv installing names, or why it is refused.
func (c *Connector) installCommand(names []string) (string, []string, error) {
	if len(names) == 0 || len(names) > 50 {
		return "", nil, legate.Errorf(legate.CodeInvalidArgument, "host: give 1 to 50 packages")
	}
	for _, n := range names {
		if !packageName().MatchString(n) || strings.Contains(n, "..") {
			return "", nil, legate.Errorf(legate.CodeInvalidArgument, "host: %q is not a package name (letters, digits and . _ + : @ = -, starting with a letter or digit)", n)
		}
		if len(c.cfg.InstallAllowlist) > 0 && !slices.Contains(c.cfg.InstallAllowlist, n) {
			return "", nil, legate.Errorf(legate.CodePermissionDenied, "host: %s is not on install_allowlist", n)
		}
	}
	for _, m := range managers {
		if _, err := exec.LookPath(m.name); err != nil {
			continue
		}
		argv := append(slices.Clone(m.argv), names...)
		if m.sudo && geteuid() != 0 {
			argv = append([]string{"sudo", "-n", "--"}, argv...)
		}
		return m.name, argv, nil
	}
	return "", nil, legate.Errorf(legate.CodeNotFound, "host: no known package manager on PATH (apt-get, dnf, yum, zypper, apk, pacman, brew)")
}

func (c *Connector) pkgInstall(ctx context.Context, _ *connectors.Call, in *installArgs) (*legate.Result, error) {
	name, argv, err := c.installCommand(in.Packages)
	if err != nil {
		return nil, err
	}
	res, err := c.run(ctx, argv[0], time.Duration(c.cfg.InstallTimeout), sandbox.Direct(argv, c.jail.Path(), append(childEnv(), "PWD="+c.jail.Path(), "DEBIAN_FRONTEND=noninteractive")))
	if err != nil {
		return nil, err
	}
	out := &InstallResult{Manager: name, Command: argv, ExitCode: res.ExitCode, TimedOut: res.TimedOut, Output: res.Stdout}
	if res.Stderr != "" {
		out.Output += "\n" + res.Stderr
	}
	return &legate.Result{Structured: out}, nil
}
