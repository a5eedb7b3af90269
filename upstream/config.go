package upstream

import (
	"fmt"
	"github.com/legate-mcp/legate"
	"net/url"
	"path"
	"regexp"
	"slices"
	"time"
)

// Config is one upstream MCP server, an entry of `upstreams:` in
// config.yaml or a stored definition (the same shape, as JSON).
type Config struct {
	// ID names the upstream: [a-z0-9-]+; its tools become mcp.<id>.<tool>.
	ID string `yaml:"id" json:"id"`
	// URL of a remote server (Streamable HTTP, or legacy SSE with transport: sse).
	URL string `yaml:"url" json:"url,omitempty"`
	// Transport of a remote server: streamable (default) or sse.
	Transport string `yaml:"transport" json:"transport,omitempty"`
	// Command runs a local server over stdio: the program and its arguments, no shell.
	Command []string `yaml:"command" json:"command,omitempty"`
	// Env is the whole environment of a stdio server, besides a minimal PATH and HOME.
	Env map[string]string `yaml:"env" json:"env,omitempty"`
	// Dir is the working directory of a stdio server.
	Dir string `yaml:"dir" json:"dir,omitempty"`
	// HeaderEnv maps an HTTP header to the name of the environment variable
	// holding its whole value, e.g. {Authorization: GITHUB_MCP_TOKEN}.
	HeaderEnv map[string]string `yaml:"header_env" json:"header_env,omitempty"`
	// TrustAnnotations (default true) honours readOnlyHint; false makes every
	// tool of this upstream at least class write.
	TrustAnnotations *bool `yaml:"trust_annotations" json:"trust_annotations,omitempty"`
	// Tools filters the upstream's tools by name.
	Tools ToolFilter `yaml:"tools" json:"tools,omitzero"`
	// Timeout of one call (default 60s). On a call whose client asked for
	// progress, each progress notification from the upstream restarts it;
	// Legate asks the upstream for progress only then, as the client would.
	Timeout legate.Duration `yaml:"timeout" json:"timeout,omitempty"`
	// Session is shared (default: a small pool used by every client) or
	// per_client (one upstream session per client session).
	Session string `yaml:"session" json:"session,omitempty"`
	// Prefix (default true) names tools and prompts mcp.<id>.<name>; false
	// exposes them under their own names.
	Prefix *bool `yaml:"prefix" json:"prefix,omitempty"`
	// RefreshInterval, when set, refreshes the tool cache this often.
	RefreshInterval legate.Duration `yaml:"refresh_interval" json:"refresh_interval,omitempty"`
	// MaxConcurrency bounds the calls in flight to this upstream (default 32).
	MaxConcurrency int `yaml:"max_concurrency" json:"max_concurrency,omitempty"`
	// MaxResultBytes bounds one message from this upstream, a call's result
	// included (default: the top-level max_result_bytes, else 16 MiB). A
	// larger result is cut off as it arrives, never read whole, and the call
	// fails with ADAPTER_MAPPING_ERROR naming the limit.
	MaxResultBytes int64 `yaml:"max_result_bytes" json:"max_result_bytes,omitempty"`
	// PoolSize is the number of shared sessions (default 1 for stdio, 4 for HTTP).
	PoolSize int `yaml:"pool_size" json:"pool_size,omitempty"`
	// ProtocolVersion spoken to the upstream (default 2025-11-25, which has
	// sessions and so can relay sampling and elicitation).
	ProtocolVersion string `yaml:"protocol_version" json:"protocol_version,omitempty"`
	// Tenant owns the upstream: only its principals see its tools. Empty: shared.
	Tenant string `yaml:"tenant" json:"tenant,omitempty"`
	// Pin is tofu (default: a tool's definition is pinned when first seen)
	// or strict (only when an admin accepts it). A definition that differs
	// from its pin is quarantined until accepted.
	Pin string `yaml:"pin" json:"pin,omitempty"`
}

// Pin modes.
const (
	PinTOFU   = "tofu"
	PinStrict = "strict"
)

// ToolFilter selects tools by glob (path.Match syntax) on their upstream names.
type ToolFilter struct {
	Include []string `yaml:"include" json:"include,omitempty"`
	Exclude []string `yaml:"exclude" json:"exclude,omitempty"`
}

// Session modes.
const (
	SessionShared    = "shared"
	SessionPerClient = "per_client"
)

// Defaults.
const (
	DefaultTimeout         = 60 * time.Second
	DefaultMaxConcurrency  = 32
	DefaultProtocolVersion = "2025-11-25"
	// DefaultMaxResultBytes bounds one message from an upstream when neither
	// the upstream nor the configuration says otherwise.
	DefaultMaxResultBytes = 16 << 20
)

var idPattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,62})$`)

// Validate checks the definition without I/O; errors name their key
// below at (e.g. "upstreams[0]").
func (c *Config) Validate(at string) []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: %s", at, key, fmt.Sprintf(format, args...)))
	}
	if !idPattern.MatchString(c.ID) {
		bad("id", "%q must match %s (no dots: they separate names)", c.ID, idPattern)
	}
	switch {
	case c.URL == "" && len(c.Command) == 0:
		bad("url", "an upstream needs a url or a command")
	case c.URL != "" && len(c.Command) > 0:
		bad("command", "give a url or a command, not both")
	case c.URL != "":
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("url", "must be an absolute http or https URL")
		}
		if !slices.Contains([]string{"", "streamable", "sse"}, c.Transport) {
			bad("transport", "must be streamable or sse, not %q", c.Transport)
		}
	default:
		if c.Command[0] == "" {
			bad("command", "the program is empty")
		}
		if c.Transport != "" && c.Transport != "stdio" {
			bad("transport", "a command upstream speaks stdio")
		}
		if len(c.HeaderEnv) > 0 {
			bad("header_env", "headers apply to url upstreams only")
		}
	}
	for h, env := range c.HeaderEnv {
		if env == "" {
			bad("header_env."+h, "name the environment variable holding the value")
		}
	}
	for key, globs := range map[string][]string{"tools.include": c.Tools.Include, "tools.exclude": c.Tools.Exclude} {
		for i, g := range globs {
			if _, err := path.Match(g, ""); err != nil {
				bad(fmt.Sprintf("%s[%d]", key, i), "bad glob %q", g)
			}
		}
	}
	if !slices.Contains([]string{"", PinTOFU, PinStrict}, c.Pin) {
		bad("pin", "must be tofu or strict, not %q", c.Pin)
	}
	if !slices.Contains([]string{"", SessionShared, SessionPerClient}, c.Session) {
		bad("session", "must be shared or per_client, not %q", c.Session)
	}
	// Each limit is checked on its own, so the error names the key at fault.
	for _, f := range []struct {
		key string
		v   int64
	}{
		{"timeout", int64(c.Timeout)}, {"refresh_interval", int64(c.RefreshInterval)},
		{"max_concurrency", int64(c.MaxConcurrency)}, {"pool_size", int64(c.PoolSize)},
		{"max_result_bytes", c.MaxResultBytes},
	} {
		if f.v < 0 {
			bad(f.key, "must not be negative")
		}
	}
	return errs
}

// Prefixed reports whether the upstream's names are namespaced.
func (c *Config) Prefixed() bool { return c.Prefix == nil || *c.Prefix }

// Trusted reports whether the upstream's annotations are honoured.
func (c *Config) Trusted() bool { return c.TrustAnnotations == nil || *c.TrustAnnotations }

// TransportName describes how Legate reaches the upstream.
func (c *Config) TransportName() string {
	switch {
	case len(c.Command) > 0:
		return "stdio"
	case c.Transport == "sse":
		return "sse"
	}
	return "streamable-http"
}

func (c *Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return time.Duration(c.Timeout)
	}
	return DefaultTimeout
}

func (c *Config) maxConcurrency() int {
	if c.MaxConcurrency > 0 {
		return c.MaxConcurrency
	}
	return DefaultMaxConcurrency
}

func (c *Config) poolSize() int {
	switch {
	case c.PoolSize > 0:
		return c.PoolSize
	case len(c.Command) > 0:
		return 1
	}
	return 4
}

func (c *Config) protocolVersion() string {
	if c.ProtocolVersion != "" {
		return c.ProtocolVersion
	}
	return DefaultProtocolVersion
}

// wanted reports whether the filter keeps the tool name.
func (f ToolFilter) wanted(name string) bool {
	match := func(globs []string) bool {
		for _, g := range globs {
			if ok, _ := path.Match(g, name); ok {
				return true
			}
		}
		return false
	}
	if len(f.Include) > 0 && !match(f.Include) {
		return false
	}
	return !match(f.Exclude)
}
