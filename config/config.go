// Package config loads config.yaml: strict YAML (an unknown key is an error
// naming its key path), `${NAME}` expanded from the environment in values,
// and structural validation. Each connector instance's own `config:` section
// is kept as YAML and decoded against its type's spec when the instance is
// built, so its errors name their key path too.
package config

import (
	"errors"
	"fmt"
	"github.com/legate-mcp/legate"
	"net"
	"os"
	pathpkg "path"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/internal/strictyaml"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/vault"
)

// File is the whole of config.yaml. Every field is optional: Legate runs
// with no config at all.
type File struct {
	// Listen is the address `legate serve` listens on (default 127.0.0.1:8080).
	Listen string `yaml:"listen"`
	// StateDir holds the embedded database (default $LEGATE_STATE_DIR or
	// ~/.local/state/legate). A relative path is relative to the config file.
	StateDir string `yaml:"state_dir"`
	// ToolNames chooses the names clients see: safe (default) or canonical.
	ToolNames string `yaml:"tool_names"`
	// LogLevel is debug, info (default), warn or error.
	LogLevel string `yaml:"log_level"`
	// AllowedOrigins are the browser origins allowed to call /mcp, besides
	// loopback origins when listening on loopback.
	AllowedOrigins []string `yaml:"allowed_origins"`
	// AllowedHosts are the Host header values accepted besides loopback names.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// SessionIdleTimeout closes an HTTP client session idle this long (default 30m).
	SessionIdleTimeout legate.Duration `yaml:"session_idle_timeout"`
	// CallTimeout bounds one native tool call (default 60s).
	CallTimeout legate.Duration `yaml:"call_timeout"`
	// MaxResultBytes bounds one message from an upstream, a call's result
	// included, for upstreams that set no max_result_bytes of their own
	// (default 16 MiB).
	MaxResultBytes int64 `yaml:"max_result_bytes"`
	// Connectors are the native connector instances.
	Connectors []Connector `yaml:"connectors"`
	// Upstreams are the upstream MCP servers.
	Upstreams []upstream.Config `yaml:"upstreams"`
	// Principal is who makes unauthenticated calls (default "local").
	Principal string `yaml:"principal"`
	// Policy decides which calls run, wait for approval, or are denied.
	Policy policy.Config `yaml:"policy"`
	// Approvals configures the approval inbox.
	Approvals policy.ApprovalsConfig `yaml:"approvals"`
	// Audit configures the audit log.
	Audit Audit `yaml:"audit"`
	// Profiles are named views of the catalog, assigned per principal
	// (a token's or JWT's profile).
	Profiles []Profile `yaml:"profiles"`
	// Auth decides who may call /mcp: static tokens, OAuth access tokens,
	// or nobody but loopback clients.
	Auth Auth `yaml:"auth"`
	// HTTP bounds how long the HTTP listener waits for slow and idle
	// clients, and how large a request body may be.
	HTTP HTTP `yaml:"http"`

	// Path is the file the configuration was read from, "" for none.
	Path string `yaml:"-"`
}

// Profile is a named view of the catalog: what a principal assigned to it
// sees in tools/list and may call.
type Profile struct {
	// Name is what principals refer to.
	Name string `yaml:"name"`
	// Include keeps only tools whose canonical name matches one of these
	// globs (path.Match syntax); empty keeps all.
	Include []string `yaml:"include"`
	// Exclude drops tools matching one of these globs.
	Exclude []string `yaml:"exclude"`
	// MaxTools keeps at most this many, the first by canonical name (0: no limit).
	MaxTools int `yaml:"max_tools"`
	// ToolNames is the wire naming for this profile: safe or canonical
	// (default: the top-level tool_names).
	ToolNames string `yaml:"tool_names"`
}

// Audit is the `audit:` section.
type Audit struct {
	// Retention is how long audit rows are kept (default 2160h, 90 days).
	Retention legate.Duration `yaml:"retention"`
}

// Connector is one native connector instance.
type Connector struct {
	// ID is the instance id ([a-z0-9-]+, default: the type); tools are <id>.<tool>.
	ID string `yaml:"id"`
	// Type is a registered connector type (`legate connector types`).
	Type string `yaml:"type"`
	// Tenant owns the instance: only its principals see its tools. Empty: shared.
	Tenant string `yaml:"tenant"`
	// Config is the type's own configuration, decoded against its spec when
	// the instance is built.
	Config yaml.Node `yaml:"config"`
	// Credentials maps the type's credential names to references.
	Credentials map[string]vault.Ref `yaml:"credentials"`
}

// The tool naming modes.
const (
	NamesSafe      = "safe"
	NamesCanonical = "canonical"
)

// DefaultListen is where `legate serve` listens without configuration.
const DefaultListen = "127.0.0.1:8080"

// IDPattern is what connector instance (and upstream) ids must match.
var IDPattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,62})$`)

// ReservedIDs are namespaces instance ids may not take.
var ReservedIDs = []string{"mcp", "legate"}

// Load reads and validates the file at path.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	f, err := Parse(b, os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Path = path
	return f, nil
}

// Parse decodes and validates a configuration document, expanding
// `${NAME}` through lookup (nil: the process environment).
func Parse(b []byte, lookup func(string) (string, bool)) (*File, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	f := &File{}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	if len(doc.Content) == 0 {
		return f, f.Validate()
	}
	if err := strictyaml.Expand(&doc, "", lookup); err != nil {
		return nil, err
	}
	if err := strictyaml.Decode(&doc, f, ""); err != nil {
		return nil, err
	}
	return f, f.Validate()
}

// Validate checks the file without I/O and reports every problem at once.
func (f *File) Validate() error {
	var errs []error
	bad := func(path, format string, args ...any) {
		errs = append(errs, &strictyaml.PathError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	if f.Listen != "" {
		if _, _, err := net.SplitHostPort(f.Listen); err != nil {
			bad("listen", "want host:port, e.g. 127.0.0.1:8080")
		}
	}
	if f.ToolNames != "" && f.ToolNames != NamesSafe && f.ToolNames != NamesCanonical {
		bad("tool_names", "must be %q or %q, not %q", NamesSafe, NamesCanonical, f.ToolNames)
	}
	if f.LogLevel != "" && !slices.Contains([]string{"debug", "info", "warn", "error"}, f.LogLevel) {
		bad("log_level", "must be debug, info, warn or error")
	}
	if f.SessionIdleTimeout < 0 {
		bad("session_idle_timeout", "must not be negative")
	}
	if f.CallTimeout < 0 {
		bad("call_timeout", "must not be negative")
	}
	if f.MaxResultBytes < 0 {
		bad("max_result_bytes", "must not be negative")
	}
	seen := map[string]string{}
	for i := range f.Connectors {
		c := &f.Connectors[i]
		path := fmt.Sprintf("connectors[%d]", i)
		if c.ID == "" {
			c.ID = c.Type
		}
		errs = append(errs, ValidateInstance(path, c.ID, c.Type, c.Credentials)...)
		if prev, dup := seen[c.ID]; dup && c.ID != "" {
			bad(path+".id", "duplicate id %q (also %s)", c.ID, prev)
		}
		seen[c.ID] = path
	}
	errs = append(errs, f.Auth.Validate("auth")...)
	errs = append(errs, f.HTTP.Validate("http")...)
	errs = append(errs, f.Policy.Validate("policy")...)
	if f.Approvals.Wait < 0 {
		bad("approvals.wait", "must not be negative")
	}
	if f.Approvals.Expire < 0 {
		bad("approvals.expire", "must not be negative")
	}
	if f.Audit.Retention < 0 {
		bad("audit.retention", "must not be negative")
	}
	if f.Approvals.Notify != "" {
		found := false
		for _, c := range f.Connectors {
			found = found || c.ID == f.Approvals.Notify && c.Type == "webhook"
		}
		if !found {
			bad("approvals.notify", "names no webhook connector instance of this file: %q", f.Approvals.Notify)
		}
	}
	seenProfile := map[string]bool{}
	for i, p := range f.Profiles {
		path := fmt.Sprintf("profiles[%d]", i)
		if p.Name == "" || seenProfile[p.Name] {
			bad(path+".name", "needs a unique name")
		}
		seenProfile[p.Name] = true
		for key, globs := range map[string][]string{"include": p.Include, "exclude": p.Exclude} {
			for j, g := range globs {
				if _, err := pathpkg.Match(g, ""); err != nil {
					bad(fmt.Sprintf("%s.%s[%d]", path, key, j), "bad glob %q", g)
				}
			}
		}
		if p.MaxTools < 0 {
			bad(path+".max_tools", "must not be negative")
		}
		if p.ToolNames != "" && p.ToolNames != NamesSafe && p.ToolNames != NamesCanonical {
			bad(path+".tool_names", "must be %q or %q", NamesSafe, NamesCanonical)
		}
	}
	seenUp := map[string]string{}
	for i := range f.Upstreams {
		u := &f.Upstreams[i]
		path := fmt.Sprintf("upstreams[%d]", i)
		errs = append(errs, u.Validate(path)...)
		if prev, dup := seenUp[u.ID]; dup {
			bad(path+".id", "duplicate id %q (also %s)", u.ID, prev)
		}
		seenUp[u.ID] = path
	}
	return errors.Join(errs...)
}

// ValidateInstance checks an instance's id, type and credential references;
// the config section itself is checked when the instance is built.
func ValidateInstance(path, id, typ string, creds map[string]vault.Ref) []error {
	var errs []error
	bad := func(p, format string, args ...any) {
		errs = append(errs, &strictyaml.PathError{Path: p, Msg: fmt.Sprintf(format, args...)})
	}
	t, ok := connectors.Lookup(typ)
	switch {
	case typ == "":
		bad(path+".type", "is required (one of: %s)", strings.Join(connectors.TypeNames(), ", "))
	case !ok:
		bad(path+".type", "unknown connector type %q (known: %s)", typ, strings.Join(connectors.TypeNames(), ", "))
	}
	switch {
	case id == "":
	case !IDPattern.MatchString(id):
		bad(path+".id", "%q must match %s", id, IDPattern)
	case slices.Contains(ReservedIDs, id):
		bad(path+".id", "%q is reserved", id)
	}
	names := make([]string, 0, len(creds))
	for name := range creds {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := path + ".credentials." + name
		if ok && !t.HasCredential(name) {
			bad(p, "type %q takes no credential %q (it takes: %s)", typ, name, strings.Join(t.CredentialNames(), ", "))
		}
		if err := creds[name].Validate(); err != nil {
			bad(p, "%v", err)
		}
	}
	if ok {
		for _, c := range t.Credentials {
			if _, set := creds[c.Name]; c.Required && !set {
				bad(path+".credentials."+c.Name, "is required")
			}
		}
	}
	return errs
}
