// Package upconfig is the definition of one upstream MCP server (Config),
// as config.yaml and the store give it, its checks, its defaults and the
// resolution of its header_env. Package upstream runs what it defines.
package upconfig

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/mcpapps"
	"github.com/legate-mcp/legate/upstream/oauthcfg"
	"github.com/legate-mcp/legate/vault"
)

// Config is one upstream MCP server, an entry of `upstreams:` in
// config.yaml or a stored definition (the same shape, as JSON). Its tags
// are its spec (see package config); the defaults they name are applied
// to config.yaml's upstreams by package config, and to stored ones by the
// accessors below.
type Config struct {
	ID string `yaml:"id" json:"id" required:"true" desc:"Upstream id, [a-z0-9-]+ (no dots); its tools become mcp.<id>.<tool>"`
	// Description is shown to clients in the gateway's instructions.
	Description string            `yaml:"description" json:"description,omitempty" desc:"One line on what this server is for, shown to clients in the gateway's instructions"`
	URL         string            `yaml:"url" json:"url,omitempty" example:"https://example.invalid/mcp/" desc:"URL of a remote server (Streamable HTTP, or legacy SSE with transport sse); give a url or a command"`
	Transport   string            `yaml:"transport" json:"transport,omitempty" enum:"streamable,sse,stdio" desc:"streamable (default for a url) or sse, the legacy HTTP+SSE transport; stdio for a command"`
	Command     []string          `yaml:"command" json:"command,omitempty" desc:"A local server over stdio: the program and its arguments, no shell"`
	Env         map[string]string `yaml:"env" json:"env,omitempty" desc:"The whole environment of a stdio server, besides a minimal PATH and HOME"`
	Dir         string            `yaml:"dir" json:"dir,omitempty" desc:"Working directory of a stdio server"`
	HeaderEnv   map[string]string `yaml:"header_env" json:"header_env,omitempty" example:"{Authorization: GITHUB_MCP_TOKEN}" desc:"HTTP header to the name of the environment variable holding its whole value; an unset or empty variable fails this upstream alone"`
	// Token and Headers are credential references, resolved (for the
	// upstream's tenant) each time a session is opened, never stored.
	Token   *vault.Ref           `yaml:"token" json:"token,omitempty" example:"{vault: github-mcp-token}" desc:"The server's static token, as a reference: {env: NAME}, {file: PATH} or {vault: NAME}; resolved when a session opens and sent as Authorization: Bearer TOKEN"`
	Headers map[string]vault.Ref `yaml:"headers" json:"headers,omitempty" example:"{X-API-Key: {vault: search-api-key}}" desc:"HTTP header to a reference holding its whole value: {env: NAME}, {file: PATH} or {vault: NAME}; resolved when a session opens"`
	// TrustAnnotations: nil is true.
	TrustAnnotations *bool           `yaml:"trust_annotations" json:"trust_annotations,omitempty" default:"true" desc:"true: readOnlyHint makes a tool class read, destructiveHint destructive, others write; false: every tool of this upstream is at least write"`
	Tools            ToolFilter      `yaml:"tools" json:"tools,omitzero" desc:"Glob filters on the upstream's own tool names"`
	Timeout          legate.Duration `yaml:"timeout" json:"timeout,omitempty" default:"60s" min:"0" desc:"Time limit of one call; when the client asked for progress, each progress notification from the upstream restarts it"`
	Session          string          `yaml:"session" json:"session,omitempty" enum:"shared,per_client" default:"shared" desc:"shared: a small pool of sessions for every client; per_client: one upstream session (and process) per client session, to relay sampling and elicitation"`
	// Prefix: nil is true.
	Prefix          *bool            `yaml:"prefix" json:"prefix,omitempty" default:"true" desc:"true names tools and prompts mcp.<id>.<name>; false exposes them under their own names (a collision is a load error)"`
	RefreshInterval legate.Duration  `yaml:"refresh_interval" json:"refresh_interval,omitempty" min:"0" desc:"Re-list the tools this often (0: only on list_changed, restarts and legate upstream refresh)"`
	MaxConcurrency  int              `yaml:"max_concurrency" json:"max_concurrency,omitempty" default:"32" min:"0" desc:"Calls in flight to this upstream at most; more wait"`
	MaxResultBytes  int64            `yaml:"max_result_bytes" json:"max_result_bytes,omitempty" min:"0" desc:"Largest message from this upstream in bytes (default: the top-level max_result_bytes); a larger result is cut off as it arrives and the call fails with ADAPTER_MAPPING_ERROR"`
	PoolSize        int              `yaml:"pool_size" json:"pool_size,omitempty" min:"0" desc:"Shared sessions kept open (default 4 for a url, 1 for a command)"`
	ProtocolVersion string           `yaml:"protocol_version" json:"protocol_version,omitempty" default:"2025-11-25" desc:"MCP protocol version spoken to the upstream; 2025-11-25 has sessions and so can relay sampling and elicitation"`
	Tenant          string           `yaml:"tenant" json:"tenant,omitempty" desc:"Tenant owning the upstream: only its principals see its tools (empty: shared)"`
	Auth            string           `yaml:"auth" json:"auth,omitempty" enum:"none,oauth" default:"none" desc:"none; oauth: the server is OAuth-protected (it answers 401 with protected resource metadata): each principal connects it (legate connect <id>, or /connect/<id>) through the MCP authorization flow, and its calls carry the caller's own token"`
	OAuth           *oauthcfg.Client `yaml:"oauth" json:"oauth,omitempty" desc:"With auth: oauth, a client registered with the server's authorization server (default: Legate registers itself, RFC 7591)"`
	// ListBeforeConnect: with auth: oauth, list its tools to principals
	// who have not connected it.
	ListBeforeConnect bool   `yaml:"list_before_connect" json:"list_before_connect,omitempty" desc:"With auth: oauth, list the tools to principals who have not connected it too (their calls then ask them to connect); default: only once connected"`
	Pin               string `yaml:"pin" json:"pin,omitempty" enum:"tofu,strict" default:"tofu" desc:"tofu: a tool's definition is pinned when first seen; strict: only when an admin accepts it; a definition that differs from its pin is quarantined until accepted"`
	// AllowMCPUI: apps of this upstream reach only profiles that allow them too.
	AllowMCPUI bool `yaml:"allow_mcp_ui" json:"allow_mcp_ui,omitempty" desc:"Relay this server's MCP Apps (io.modelcontextprotocol/ui): negotiate the extension with it, show its tools' _meta.ui with the resource URI as ui://mcp.<id>/…, serve its ui:// resources, and let an app call its app-only tools; false: its tools lose _meta.ui and its app-only tools and ui:// resources are hidden. A profile shows apps only with its own allow_mcp_ui"`
}

// DeclareExtensions adds to caps, a session's capabilities, the extensions
// Legate negotiates with this upstream: MCP Apps with allow_mcp_ui, whatever
// the client, since a server may offer its UI tools only to a client that
// declares the extension.
func (c *Config) DeclareExtensions(caps *mcp.ClientCapabilities) {
	if c.AllowMCPUI {
		caps.AddExtension(mcpapps.Extension, mcpapps.Settings())
	}
}

// AuthOAuth is auth: oauth.
const AuthOAuth = oauthcfg.Auth

// OAuthProtected reports whether each principal connects the upstream
// (auth: oauth).
func (c *Config) OAuthProtected() bool { return c.Auth == AuthOAuth }

// Pin modes.
const (
	PinTOFU   = "tofu"
	PinStrict = "strict"
)

// ToolFilter selects tools by glob (path.Match syntax) on their upstream names.
type ToolFilter struct {
	Include []string `yaml:"include" json:"include,omitempty" desc:"Keep only tools whose name matches one of these globs (path.Match syntax); empty keeps all"`
	Exclude []string `yaml:"exclude" json:"exclude,omitempty" desc:"Drop tools whose name matches one of these globs"`
}

// Session modes.
const (
	SessionShared    = "shared"
	SessionPerClient = "per_client"
)

// MessageLimit is the upstream's bound on one message, in bytes, given
// the configuration's top-level one: it is applied where the message is
// read (package msglimit bounds the go-sdk client's HTTP responses and a
// stdio upstream's output; the relay bounds what it reads itself), and a
// message over it ends the call as a tool error (msglimit.ToolError).
func (c *Config) MessageLimit(global int64) int64 {
	if c.MaxResultBytes > 0 {
		return c.MaxResultBytes
	}
	return global
}

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
		if c.Token != nil {
			bad("token", "a token applies to url upstreams only (a stdio server takes its secrets from env)")
		}
		if len(c.Headers) > 0 {
			bad("headers", "headers apply to url upstreams only")
		}
	}
	c.validateCredentials(bad)
	// In a stable order: the same file gives the same errors every run.
	for _, h := range slices.Sorted(maps.Keys(c.HeaderEnv)) {
		if c.HeaderEnv[h] == "" {
			bad("header_env."+h, "name the environment variable holding the value")
		}
	}
	for _, l := range []struct {
		key   string
		globs []string
	}{{"tools.include", c.Tools.Include}, {"tools.exclude", c.Tools.Exclude}} {
		for i, g := range l.globs {
			if _, err := path.Match(g, ""); err != nil {
				bad(fmt.Sprintf("%s[%d]", l.key, i), "bad glob %q", g)
			}
		}
	}
	oauthcfg.Validate(oauthcfg.Upstream{Auth: c.Auth, URL: c.URL, Transport: c.Transport, PerClient: c.Session == SessionPerClient, HeaderEnv: c.HeaderEnv, Client: c.OAuth, ListBeforeConnect: c.ListBeforeConnect}, bad)
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

// CallTimeout is the time limit of one call (timeout, or its default).
func (c *Config) CallTimeout() time.Duration {
	if c.Timeout > 0 {
		return time.Duration(c.Timeout)
	}
	return DefaultTimeout
}

// Concurrency is the bound on calls in flight (max_concurrency, or its
// default).
func (c *Config) Concurrency() int {
	if c.MaxConcurrency > 0 {
		return c.MaxConcurrency
	}
	return DefaultMaxConcurrency
}

// SharedSessions is the number of shared sessions kept open (pool_size, or
// its default).
func (c *Config) SharedSessions() int {
	switch {
	case c.PoolSize > 0:
		return c.PoolSize
	case len(c.Command) > 0:
		return 1
	}
	return 4
}

// Protocol is the protocol version spoken to the upstream.
func (c *Config) Protocol() string {
	if c.ProtocolVersion != "" {
		return c.ProtocolVersion
	}
	return DefaultProtocolVersion
}

// Wanted reports whether the filter keeps the tool name.
func (f ToolFilter) Wanted(name string) bool {
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

// validateCredentials checks token and headers: each a valid reference,
// no header given twice, and no Authorization header beside auth: oauth,
// whose Authorization is each caller's own token.
func (c *Config) validateCredentials(bad func(key, format string, args ...any)) {
	if c.Token != nil {
		if err := c.Token.Validate(); err != nil {
			bad("token", "%v", err)
		}
		if c.OAuthProtected() {
			bad("token", "with auth: oauth, the Authorization header is each caller's token")
		}
	}
	given := map[string]string{}
	for h := range c.HeaderEnv {
		given[http.CanonicalHeaderKey(h)] = "header_env." + h
	}
	if c.Token != nil {
		if prev, dup := given["Authorization"]; dup {
			bad("token", "sets the Authorization header, which %s sets too", prev)
		}
		given["Authorization"] = "token"
	}
	for _, h := range slices.Sorted(maps.Keys(c.Headers)) {
		key := "headers." + h
		if err := c.Headers[h].Validate(); err != nil {
			bad(key, "%v", err)
		}
		if !validHeaderName(h) {
			bad(key, "%q is not a valid header name", h)
		}
		ch := http.CanonicalHeaderKey(h)
		if prev, dup := given[ch]; dup {
			bad(key, "sets the %s header, which %s sets too", ch, prev)
		}
		given[ch] = key
		if ch == "Authorization" && c.OAuthProtected() {
			bad(key, "with auth: oauth, the Authorization header is each caller's token")
		}
	}
}

// validHeaderName reports whether h is an HTTP token (RFC 9110).
func validHeaderName(h string) bool {
	if h == "" {
		return false
	}
	for _, r := range h {
		if r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

// HasCredentialRefs reports whether the upstream's token or headers
// reference credentials, which are resolved when a session opens.
func (c *Config) HasCredentialRefs() bool { return c.Token != nil || len(c.Headers) > 0 }

// CredentialRefs lists the references of token and headers, each with
// the header it fills, in a stable order.
func (c *Config) CredentialRefs() []HeaderRef {
	var out []HeaderRef
	if c.Token != nil {
		out = append(out, HeaderRef{Key: "token", Header: "Authorization", Ref: *c.Token, Bearer: true})
	}
	for _, h := range slices.Sorted(maps.Keys(c.Headers)) {
		out = append(out, HeaderRef{Key: "headers." + h, Header: h, Ref: c.Headers[h]})
	}
	return out
}

// HeaderRef is one header an upstream's credential reference fills.
type HeaderRef struct {
	Key    string // token or headers.NAME
	Header string
	Ref    vault.Ref
	Bearer bool // the value is sent as "Bearer VALUE"
}

// ErrCredential is wrapped by the error of an upstream whose token or
// headers reference a secret that cannot be resolved.
var ErrCredential = errors.New("upstream credential not resolved")

// ResolveHeaders resolves token and headers through resolve (nil: a
// vault.Resolver with no vault, which resolves env and file only), for
// the upstream's tenant: at connect time, so that a secret set or rotated
// in the vault is used by the next session. Errors name the key and the
// reference, never a value. With neither token nor headers, it returns nil.
func (c *Config) ResolveHeaders(ctx context.Context, resolve func(context.Context, string, vault.Ref) (string, error)) (http.Header, error) {
	if !c.HasCredentialRefs() {
		return nil, nil
	}
	if resolve == nil {
		resolve = (&vault.Resolver{}).Resolve
	}
	h := http.Header{}
	for _, r := range c.CredentialRefs() {
		v, err := resolve(ctx, c.Tenant, r.Ref)
		if err != nil {
			return nil, fmt.Errorf("upstream %s: %s (%s): %w: %w", c.ID, r.Key, r.Ref, ErrCredential, err)
		}
		if strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("upstream %s: %s (%s): the value holds a line break: %w", c.ID, r.Key, r.Ref, ErrCredential)
		}
		if r.Bearer {
			v = "Bearer " + v
		}
		h.Set(r.Header, v)
	}
	return h, nil
}

// ErrHeaderEnv is wrapped by the error of an upstream whose header_env
// names an unset or empty environment variable.
var ErrHeaderEnv = errors.New("header environment variable not set")

// EnvHeaders resolves header_env when the upstream is built. The values stay in the
// transport; errors name the variable, never a value.
func (c *Config) EnvHeaders(lookup func(string) (string, bool)) (http.Header, error) {
	h := http.Header{}
	for name, env := range c.HeaderEnv {
		v, ok := lookup(env)
		if !ok || v == "" {
			return nil, fmt.Errorf("upstream %s: header %s: environment variable %s is not set or empty: %w", c.ID, name, env, ErrHeaderEnv)
		}
		h.Set(name, v)
	}
	return h, nil
}
