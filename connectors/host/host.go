// Package host is the "host" connector: the tools of the machine Legate
// runs on, held in a workspace jail, and the skills installed on it.
//
// Files and search (fs_*) and facts about the box (host_*) are always
// offered. Everything that can change the machine beyond the workspace is
// behind a switch, and a tool that is off is not listed at all: sh_exec
// and sh_which (allow_shell), pkg_install (allow_install), net_fetch
// (allow_fetch). The skills_* tools exist only while a skill is enabled.
//
// Every file operation goes through the workspace jail (package
// workspace), an [os.Root] opened on workspace_root: a path is resolved
// beneath it, symlinks included, and one that would leave it is refused,
// race-free where the kernel offers openat2 with RESOLVE_BENEATH. The
// workspace root and the OS user Legate runs as are the real boundary:
// run it as a user that owns nothing you would mind an instruction
// touching.
package host

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/host/sandbox"
	"github.com/legate-mcp/legate/connectors/host/skills"
	"github.com/legate-mcp/legate/connectors/host/workspace"
)

// Defaults and limits of the configuration.
const (
	DefaultMaxOutputBytes = 32 << 10
	DefaultMaxFileBytes   = 1 << 20
	DefaultFetchMaxBytes  = 32 << 20
)

// Config is a host instance's configuration.
type Config struct {
	// WorkspaceRoot is the only tree the file tools touch.
	WorkspaceRoot string `yaml:"workspace_root" required:"true" desc:"Absolute path of the only directory tree the tools may touch; every path is resolved beneath it, through symlinks" example:"/srv/agent/work"`
	// MaxToolOutputBytes caps every result.
	MaxToolOutputBytes int `yaml:"max_tool_output_bytes" default:"32768" desc:"Largest result a tool returns, in bytes; a longer one is cut and says so"`
	// MaxFileBytes caps what fs_read reads and fs_write writes.
	MaxFileBytes int `yaml:"max_file_bytes" default:"1048576" desc:"Largest file fs_read, fs_edit and fs_grep read and fs_write writes, in bytes"`
	// AllowShell turns sh_exec and sh_which on.
	AllowShell bool `yaml:"allow_shell" default:"false" desc:"Offer sh_exec and sh_which; off, they are not listed"`
	// ShellAllowlist, when set, runs commands without a shell.
	ShellAllowlist []string `yaml:"shell_allowlist" desc:"Program names sh_exec may run; when non-empty a command is split into words and run directly, with no shell, and any shell metacharacter is refused. Empty: commands go to sh -c" example:"[git, go, make]"`
	// ShellDenylist refuses programs outright.
	ShellDenylist []string `yaml:"shell_denylist" desc:"Program names sh_exec refuses outright; it wins over the allowlist" example:"[rm, sudo]"`
	// ShellTimeout bounds one command.
	ShellTimeout legate.Duration `yaml:"shell_timeout" default:"5m" desc:"Time limit of one command, a ceiling the caller cannot raise; past it the whole process group is killed"`
	// ShellEnv is the whole environment of a command.
	ShellEnv []string `yaml:"shell_env" desc:"The environment of sh_exec's commands, which otherwise start with an empty one: NAME passes that variable from Legate's environment when it is set, NAME=VALUE sets it; LEGATE_* names are refused. PATH is /usr/local/bin:/usr/bin:/bin unless named" example:"[HOME, LANG=C.UTF-8, PATH]"`
	// ShellReadDirs are what a command may read and execute besides the workspace.
	ShellReadDirs []string `yaml:"shell_read_dirs" default:"[/usr, /bin, /sbin, /lib, /lib32, /lib64, /etc]" desc:"Directories sh_exec's commands may read and execute from, besides workspace_root, where the kernel offers Landlock; everything else (the state directory, /proc, /home, /tmp) is out of reach. Neither the state directory nor Legate's config file may lie beneath one"`
	// ShellWriteDirs are what a command may write besides the workspace.
	ShellWriteDirs []string `yaml:"shell_write_dirs" desc:"Directories sh_exec's commands may also write, besides workspace_root (a build cache); same rules as shell_read_dirs" example:"[/var/cache/agent]"`
	// ShellMaxCPU bounds the CPU time of each process of a command.
	ShellMaxCPU legate.Duration `yaml:"shell_max_cpu" default:"5m" desc:"CPU time each process of a command may use (RLIMIT_CPU); past it the kernel kills the process"`
	// ShellMaxFileBytes bounds the size of a file a command writes.
	ShellMaxFileBytes int `yaml:"shell_max_file_bytes" default:"1073741824" desc:"Largest file a command's process may write, in bytes (RLIMIT_FSIZE); 0: no limit"`
	// ShellMaxMemoryBytes bounds the address space of each process of a command.
	ShellMaxMemoryBytes int `yaml:"shell_max_memory_bytes" default:"0" desc:"Address space of each process of a command, in bytes (RLIMIT_AS); 0: no limit. Runtimes that reserve address space up front (Java, Node) need several GiB"`
	// ShellMaxProcesses bounds the processes of the user when a command forks.
	ShellMaxProcesses int `yaml:"shell_max_processes" default:"0" desc:"Processes and threads the OS user may have for a command to fork (RLIMIT_NPROC, counted over every process of the user, Legate's threads included); 0: no limit. Meaningful when Legate runs as a user of its own"`
	// AllowInstall turns pkg_install on.
	AllowInstall bool `yaml:"allow_install" default:"false" desc:"Offer pkg_install, which runs this machine's package manager (apt, dnf, yum, zypper, apk, pacman, brew) with sudo -n when not root"`
	// InstallAllowlist restricts pkg_install.
	InstallAllowlist []string `yaml:"install_allowlist" desc:"Package names pkg_install may install; empty means any name that passes the name check" example:"[git, jq]"`
	// InstallTimeout bounds one installation.
	InstallTimeout legate.Duration `yaml:"install_timeout" default:"5m" desc:"Time limit of one pkg_install"`
	// AllowFetch turns net_fetch on.
	AllowFetch bool `yaml:"allow_fetch" default:"false" desc:"Offer net_fetch, which downloads over https into fetch_dir"`
	// FetchAllowlist restricts net_fetch's hosts.
	FetchAllowlist []string `yaml:"fetch_allowlist" desc:"Hosts net_fetch may download from, each matching its subdomains too; empty means any public host" example:"[github.com, example.org]"`
	// FetchMaxBytes caps one download.
	FetchMaxBytes int `yaml:"fetch_max_bytes" default:"33554432" desc:"Largest download, in bytes; a larger one is refused and nothing is kept"`
	// FetchDir is where downloads land.
	FetchDir string `yaml:"fetch_dir" default:"downloads" desc:"Directory under workspace_root downloads are written to, without the executable bit; refused if it is on PATH"`
	// FetchCAFile adds trusted certificate authorities.
	FetchCAFile string `yaml:"fetch_ca_file" desc:"PEM file of certificate authorities net_fetch trusts besides the system's (an internal CA)"`
	// AllowPrivateNetworks lets net_fetch reach internal addresses.
	AllowPrivateNetworks bool `yaml:"allow_private_networks" default:"false" desc:"Let net_fetch reach loopback, private and link-local addresses; refused by default to prevent server-side request forgery"`
	// SkillsDir is the skills library.
	SkillsDir string `yaml:"skills_dir" desc:"Directory of installed skills, outside workspace_root (default the skills folder of the state directory, where legate skills installs them)"`
}

func init() {
	connectors.Register(connectors.TypeOf(connectors.Info{
		Name:        "host",
		Description: "This machine's own tools in a workspace jail (files, search, host facts; opt-in shell, packages, downloads) and its skills",
	}, New))
}

// Connector is one host instance.
type Connector struct {
	id  string
	cfg Config
	// stateDir is the state directory the instance was built in.
	stateDir string
	jail     *workspace.Jail
	files    *files
	skills   *skillTools
	fetch    *fetcher
	// enabled are the skills enabled when the instance was built: the
	// skills tools and the instructions line follow them.
	enabled []skills.Skill
	rev     string
	tools   []connectors.Tool
}

// New builds an instance. It reads the skills library (a missing one has
// no skills) but opens the workspace only at the first call, so that a
// configuration can be checked on another machine.
func New(inst connectors.Instance, cfg *Config) (connectors.Connector, error) {
	c := &Connector{id: inst.ID, cfg: *cfg, stateDir: inst.StateDir}
	if c.cfg.SkillsDir == "" {
		c.cfg.SkillsDir = skills.DefaultDir(inst.StateDir)
	}
	c.jail = workspace.New(cfg.WorkspaceRoot)
	lib := skills.Open(c.cfg.SkillsDir)
	c.skills = &skillTools{lib: lib, budget: c.cfg.budget(), maxFile: c.cfg.MaxFileBytes}
	c.files = &files{cfg: &c.cfg, jail: c.jail}
	c.fetch = &fetcher{cfg: &c.cfg, jail: c.jail}
	c.rev = lib.Revision()
	all, _ := lib.List()
	for _, s := range all {
		if s.Enabled && s.Err == "" {
			c.enabled = append(c.enabled, s)
		}
	}
	c.tools = c.buildTools()
	if c.cfg.AllowShell {
		sandbox.WarnUnconfined(c.id)
	}
	return c, nil
}

func (c *Connector) buildTools() []connectors.Tool {
	tools := c.files.fsTools()
	tools = append(tools, c.boxTools()...)
	if c.cfg.AllowShell {
		tools = append(tools, c.shellTools()...)
	}
	if c.cfg.AllowInstall {
		tools = append(tools, c.installTool())
	}
	if c.cfg.AllowFetch {
		tools = append(tools, c.fetch.tool())
	}
	if len(c.enabled) > 0 {
		tools = append(tools, c.skills.tools()...)
	}
	return tools
}

// Validate checks the configuration without I/O and reports every problem.
func (c *Connector) Validate() error {
	var errs []error
	root := c.cfg.WorkspaceRoot
	switch {
	case root == "":
		errs = append(errs, legate.Invalid("workspace_root", "is required"))
	case !filepath.IsAbs(root):
		errs = append(errs, legate.Invalid("workspace_root", "must be an absolute path, got %q", root))
	case filepath.Clean(root) == "/":
		errs = append(errs, legate.Invalid("workspace_root", "must not be the filesystem root"))
	}
	if c.cfg.MaxToolOutputBytes < 1024 {
		errs = append(errs, legate.Invalid("max_tool_output_bytes", "must be at least 1024, got %d", c.cfg.MaxToolOutputBytes))
	}
	if c.cfg.MaxFileBytes < 1 {
		errs = append(errs, legate.Invalid("max_file_bytes", "must be positive, got %d", c.cfg.MaxFileBytes))
	}
	if c.cfg.ShellTimeout <= 0 {
		errs = append(errs, legate.Invalid("shell_timeout", "must be positive"))
	}
	if c.cfg.InstallTimeout <= 0 {
		errs = append(errs, legate.Invalid("install_timeout", "must be positive"))
	}
	if c.cfg.FetchMaxBytes < 1 {
		errs = append(errs, legate.Invalid("fetch_max_bytes", "must be positive, got %d", c.cfg.FetchMaxBytes))
	}
	for i, p := range append(append([]string{}, c.cfg.ShellAllowlist...), c.cfg.ShellDenylist...) {
		if p == "" || strings.ContainsAny(p, "/ \t") {
			field := "shell_allowlist"
			if i >= len(c.cfg.ShellAllowlist) {
				field = "shell_denylist"
			}
			errs = append(errs, legate.Invalid(field, "%q: give program names, not paths or commands", p))
		}
	}
	errs = append(errs, validateShell(&c.cfg, c.stateDir)...)
	for _, p := range c.cfg.InstallAllowlist {
		if !packageName().MatchString(p) {
			errs = append(errs, legate.Invalid("install_allowlist", "%q is not a package name", p))
		}
	}
	if d := c.cfg.FetchDir; d == "" || filepath.IsAbs(d) || !filepath.IsLocal(d) {
		errs = append(errs, legate.Invalid("fetch_dir", "must be a relative path inside workspace_root, got %q", d))
	}
	if sd := c.cfg.SkillsDir; sd != "" && root != "" && filepath.IsAbs(sd) {
		if workspace.Within(filepath.Clean(root), filepath.Clean(sd)) || workspace.Within(filepath.Clean(sd), filepath.Clean(root)) {
			errs = append(errs, legate.Invalid("skills_dir", "must lie outside workspace_root: fs_write there would rewrite the standing orders of every later run"))
		}
	}
	return errors.Join(errs...)
}

// Test opens the workspace and says what the instance offers.
func (c *Connector) Test(ctx context.Context, _ connectors.Credentials) error {
	if _, err := c.jail.Open(); err != nil {
		return err
	}
	connectors.Reportf(ctx, "workspace %s: ok", c.jail.Path())
	connectors.Reportf(ctx, "shell %v, install %v, fetch %v, skills enabled %d", c.cfg.AllowShell, c.cfg.AllowInstall, c.cfg.AllowFetch, len(c.enabled))
	return nil
}

// Tools lists the instance's tools.
func (c *Connector) Tools() []connectors.Tool { return c.tools }

// Close releases the workspace's directory handle.
func (c *Connector) Close() error {
	c.fetch.close()
	return c.jail.Close()
}

// Instructions is what this instance adds to the server's MCP
// instructions: one line per enabled skill, its name and description,
// never its body.
func (c *Connector) Instructions() string {
	if len(c.enabled) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Skills on this machine (read one with %s.skills_load before acting on what it covers):", c.id)
	for _, s := range c.enabled {
		fmt.Fprintf(&b, "\n- %s: %s", s.Name, oneLine(s.Description))
	}
	return b.String()
}

// Stale reports whether the skills enabled changed since the instance was
// built: the gateway then builds it again, so that its tools and
// instructions follow them (clients are told the tool list changed).
func (c *Connector) Stale() bool { return c.skills.lib.Revision() != c.rev }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// AdapterVersion is the version of the host connector's own code.
const AdapterVersion = "1.0.0"

// Describe says the connector's version; it speaks no provider's
// versioned API: it works on the machine it runs on.
func (c *Connector) Describe() connectors.Description {
	return connectors.Description{AdapterVersion: AdapterVersion}
}

var (
	_ connectors.Connector = (*Connector)(nil)
	_ connectors.Closer    = (*Connector)(nil)
	_ connectors.Describer = (*Connector)(nil)
)
