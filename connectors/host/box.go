package host

import (
	"context"
	"net"
	"net/url"
	"os"
	"os/user"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

type noArgs struct{}

// Limits are an instance's own limits, as host_info reports them.
type Limits struct {
	MaxToolOutputBytes int      `json:"max_tool_output_bytes"`
	MaxFileBytes       int      `json:"max_file_bytes"`
	Shell              bool     `json:"shell"`
	ShellAllowlist     []string `json:"shell_allowlist,omitempty"`
	ShellDenylist      []string `json:"shell_denylist,omitempty"`
	ShellTimeout       string   `json:"shell_timeout,omitempty"`
	Install            bool     `json:"install"`
	InstallAllowlist   []string `json:"install_allowlist,omitempty"`
	Fetch              bool     `json:"fetch"`
	FetchAllowlist     []string `json:"fetch_allowlist,omitempty"`
	FetchMaxBytes      int      `json:"fetch_max_bytes,omitempty"`
	FetchDir           string   `json:"fetch_dir,omitempty"`
}

// InfoResult is host_info's result.
type InfoResult struct {
	Hostname  string `json:"hostname"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus" jsonschema:"Logical CPUs this process can use"`
	User      string `json:"user"`
	UID       int    `json:"uid"`
	Workspace string `json:"workspace"`
	Limits    Limits `json:"limits"`
}

// EnvResult is host_env's result.
type EnvResult struct {
	Variables map[string]string `json:"variables"`
	Masked    []string          `json:"masked" jsonschema:"Names whose values were masked as credential-looking"`
	Truncated bool              `json:"truncated"`
}

// DiskResult is host_disk's result.
type DiskResult struct {
	Path       string `json:"path"`
	TotalBytes uint64 `json:"total_bytes"`
	FreeBytes  uint64 `json:"free_bytes" jsonschema:"Bytes available to this process's user"`
}

// Interface is one network interface.
type Interface struct {
	Name      string   `json:"name"`
	Up        bool     `json:"up"`
	Loopback  bool     `json:"loopback"`
	Addresses []string `json:"addresses"`
}

// NetResult is host_net's result.
type NetResult struct {
	Interfaces []Interface `json:"interfaces"`
	// Outbound is the source address the system picks for traffic to the
	// internet; no packet is sent to find it.
	Outbound string `json:"outbound,omitempty"`
}

func (c *Connector) boxTools() []connectors.Tool {
	return []connectors.Tool{
		connectors.Returning[InfoResult](connectors.NewTool("host_info", "The machine Legate runs on: hostname, OS and architecture, CPU count, the user it runs as, the workspace, and this instance's own limits.", legate.ClassRead, c.hostInfo)),
		connectors.Returning[EnvResult](connectors.NewTool("host_env", "Environment variables of the Legate process, credential-looking values masked.", legate.ClassRead, c.hostEnv)),
		connectors.Returning[DiskResult](connectors.NewTool("host_disk", "Free and total disk space of the workspace's filesystem.", legate.ClassRead, c.hostDisk)),
		connectors.Returning[NetResult](connectors.NewTool("host_net", "Network interfaces, their addresses, and the outbound source address.", legate.ClassRead, c.hostNet)),
	}
}

func (c *Connector) limits() Limits {
	l := Limits{MaxToolOutputBytes: c.cfg.MaxToolOutputBytes, MaxFileBytes: c.cfg.MaxFileBytes,
		Shell: c.cfg.AllowShell, Install: c.cfg.AllowInstall, Fetch: c.cfg.AllowFetch}
	if l.Shell {
		l.ShellAllowlist, l.ShellDenylist, l.ShellTimeout = c.cfg.ShellAllowlist, c.cfg.ShellDenylist, time.Duration(c.cfg.ShellTimeout).String()
	}
	if l.Install {
		l.InstallAllowlist = c.cfg.InstallAllowlist
	}
	if l.Fetch {
		l.FetchAllowlist, l.FetchMaxBytes, l.FetchDir = c.cfg.FetchAllowlist, c.cfg.FetchMaxBytes, c.cfg.FetchDir
	}
	return l
}

func (c *Connector) hostInfo(context.Context, *connectors.Call, *noArgs) (*legate.Result, error) {
	out := &InfoResult{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), UID: os.Geteuid(), Workspace: c.jail.Path(), Limits: c.limits()}
	out.Hostname, _ = os.Hostname()
	if u, err := user.Current(); err == nil {
		out.User = u.Username
	}
	return &legate.Result{Structured: out}, nil
}

// secretName matches the names of variables that commonly hold a credential.
// It and the package's other patterns are compiled at their first use, not
// as the package initialises: every default build links this package.
var secretName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(secret|token|passw|passphrase|pwd|credential|api_?key|access_?key|private|auth|session|cookie|signature|salt|dsn|(^|_)key($|_))`)
})

// Masked stands in for a masked value.
const Masked = legate.Redacted

func (c *Connector) hostEnv(context.Context, *connectors.Call, *noArgs) (*legate.Result, error) {
	env := os.Environ()
	sort.Strings(env)
	out := &EnvResult{Variables: map[string]string{}, Masked: []string{}}
	var secrets []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if secretName().MatchString(k) && v != "" {
			secrets = append(secrets, v)
		}
	}
	set := legate.NewSecrets(secrets...)
	size, budget := 0, c.cfg.budget()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch masked := maskURL(set.MaskString(v)); {
		case secretName().MatchString(k) && v != "":
			v = Masked
			out.Masked = append(out.Masked, k)
		case masked != v:
			v = masked
			out.Masked = append(out.Masked, k)
		}
		if size += len(k) + len(v) + 8; size > budget {
			out.Truncated = true
			break
		}
		out.Variables[k] = v
	}
	return &legate.Result{Structured: out}, nil
}

// maskURL masks the password of URLs in v (postgres://user:pw@host/db).
func maskURL(v string) string {
	if !strings.Contains(v, "://") || !strings.Contains(v, "@") {
		return v
	}
	u, err := url.Parse(v)
	if err != nil || u.User == nil {
		return v
	}
	if _, ok := u.User.Password(); !ok {
		return v
	}
	u.User = url.UserPassword(u.User.Username(), "xxxxx")
	return strings.Replace(u.String(), "xxxxx", Masked, 1)
}

func (c *Connector) hostDisk(context.Context, *connectors.Call, *noArgs) (*legate.Result, error) {
	total, free, err := diskSpace(c.jail.Path())
	if err != nil {
		return nil, legate.Errorf(legate.CodeNotFound, "host: disk space of %s: %v", c.jail.Path(), err)
	}
	return &legate.Result{Structured: &DiskResult{Path: c.jail.Path(), TotalBytes: total, FreeBytes: free}}, nil
}

func (c *Connector) hostNet(context.Context, *connectors.Call, *noArgs) (*legate.Result, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, legate.Errorf(legate.CodeTransient, "host: interfaces: %v", err)
	}
	out := &NetResult{Interfaces: []Interface{}}
	for _, i := range ifs {
		it := Interface{Name: i.Name, Up: i.Flags&net.FlagUp != 0, Loopback: i.Flags&net.FlagLoopback != 0, Addresses: []string{}}
		if addrs, err := i.Addrs(); err == nil {
			for _, a := range addrs {
				it.Addresses = append(it.Addresses, a.String())
			}
		}
		out.Interfaces = append(out.Interfaces, it)
	}
	// A UDP "connection" only asks the kernel for a route: nothing is sent.
	if conn, err := net.Dial("udp", "192.0.2.1:9"); err == nil {
		if a, ok := conn.LocalAddr().(*net.UDPAddr); ok {
			out.Outbound = a.IP.String()
		}
		conn.Close()
	}
	return &legate.Result{Structured: out}, nil
}
