// Package config loads config.yaml. The file's Go types are its spec:
// each field's tags (desc, default, required, enum, min) drive, in one
// place each,
//
//   - strict decoding (an unknown or repeated key is an error naming its
//     key path), with `${NAME}` expanded from the environment in values;
//   - defaults (ApplyDefaults, the only place they are applied);
//   - validation (Validate, which changes nothing and reports every
//     problem at its key path);
//   - the JSON Schema (Schema, `legate config schema`) and docs/configuration.md's
//     table of keys (KeyTable).
//
// Load is decode → defaults → validate, and reports every problem of all
// three at once, each an *Error with its file and line. Each connector
// instance's own `config:` section is kept as YAML: Load decodes it
// against its type's spec to report its errors with the rest, and the
// instance decodes it again when it is built.
package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	pathpkg "path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/internal/strictyaml"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/telemetry"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/vault"
)

// File is the whole of config.yaml. Every key is optional: Legate runs
// with no config at all. Each field's tags are its spec (see
// strictyaml.Spec): they drive decoding, defaults, validation, the JSON
// Schema (`legate config schema`) and the key tables of the docs.
type File struct {
	Listen string `yaml:"listen" default:"127.0.0.1:8080" example:"127.0.0.1:8080" desc:"Address (host:port) legate serve listens on; keep it on loopback unless a proxy with authentication stands in front"`
	// StateDir's default depends on the environment, so it has none here.
	StateDir           string                 `yaml:"state_dir" example:"./state" desc:"Directory of the embedded database, relative to this file; overridden by --state-dir and $LEGATE_STATE_DIR (default $XDG_STATE_HOME/legate or ~/.local/state/legate)"`
	ToolNames          string                 `yaml:"tool_names" enum:"safe,canonical" default:"safe" desc:"Tool names clients see: safe maps canonical names to ^[A-Za-z0-9_-]{1,64}$ (dots become __), canonical shows them as they are; calls by either name work"`
	LogLevel           string                 `yaml:"log_level" enum:"debug,info,warn,error" default:"info" desc:"Least level logged (to stderr); --log-level overrides it"`
	AllowedOrigins     []string               `yaml:"allowed_origins" desc:"Browser origins allowed to call /mcp besides loopback origins when listening on loopback; any other Origin header is refused with 403"`
	AllowedHosts       []string               `yaml:"allowed_hosts" example:"[legate.example.com]" desc:"Host header values accepted besides loopback names, such as the name a reverse proxy in front uses"`
	SessionIdleTimeout legate.Duration        `yaml:"session_idle_timeout" default:"30m" min:"0" desc:"An HTTP client session idle this long is closed, with its per_client upstream sessions"`
	ColdStartWait      legate.Duration        `yaml:"cold_start_wait" default:"5s" min:"0" desc:"On a start with upstreams never listed before (an empty tool cache), how long the first tools/list waits for them to be listed, for clients that list once and ignore list_changed; 0 answers at once"`
	CallTimeout        legate.Duration        `yaml:"call_timeout" default:"60s" min:"0" desc:"Longest a native tool call may take"`
	RepeatWindow       *legate.Duration       `yaml:"repeat_window" default:"10m" min:"0" desc:"A call that may write and repeats one of the same caller exactly (tool and arguments) within this window is the same operation: a connector writes once and returns the first outcome; 0 turns it off. A client's own key (_meta io.legate/idempotency-key) holds whatever the window"`
	MaxResultBytes     int64                  `yaml:"max_result_bytes" default:"16777216" min:"0" desc:"Largest message in bytes read from an upstream, a call's result included, for upstreams that set none; a larger result is cut off as it arrives and the call fails with ADAPTER_MAPPING_ERROR"`
	Connectors         []Connector            `yaml:"connectors" desc:"Native connector instances (legate connector types lists the types and their fields)"`
	Upstreams          []upstream.Config      `yaml:"upstreams" desc:"Upstream MCP servers, whose tools join the catalog as mcp.<id>.<tool>"`
	Principal          string                 `yaml:"principal" default:"local" desc:"Who makes the calls while inbound authentication is off"`
	Policy             policy.Config          `yaml:"policy" desc:"What happens to each call: allow, deny, or wait for approval"`
	Approvals          policy.ApprovalsConfig `yaml:"approvals" desc:"The approval inbox (legate approvals, /admin/v1/approvals)"`
	Audit              Audit                  `yaml:"audit" desc:"The audit log: one row per call, never argument values"`
	Profiles           []Profile              `yaml:"profiles" desc:"Named views of the catalog, assigned to principals by their token or JWT"`
	Profile            string                 `yaml:"profile" desc:"Profile of the callers who name none: the local principal while inbound authentication is off, and tokens and JWTs without a profile (empty: the whole catalog)"`
	ViewCacheSize      int                    `yaml:"view_cache_size" default:"1024" min:"0" desc:"How many views of the catalog, one per (tenant, profile) of the principals calling, are kept built; the least recently used is dropped and built again when needed"`
	Auth               Auth                   `yaml:"auth" desc:"Inbound authentication: static tokens, OAuth access tokens, or nobody but loopback clients"`
	HTTP               HTTP                   `yaml:"http" desc:"Limits of the HTTP listener against slow and idle clients; event streams and long calls are not cut by them"`
	Limits             Limits                 `yaml:"limits" desc:"Rate limits of calls per principal and per tool; a call over one fails at once with RATE_LIMITED and retry_after_seconds"`
	Budgets            Budgets                `yaml:"budgets" desc:"Budgets per principal and per tenant per window — calls, result bytes, write calls — counted in the store (shared by replicas); a call over one fails QUOTA_EXCEEDED with retry_after_seconds until its window ends"`
	Panel              Panel                  `yaml:"panel" desc:"The web panel (inbox, connectors, upstreams, tools, audit), off unless it has an address"`
	Metrics            Metrics                `yaml:"metrics" desc:"The Prometheus series on a listener of their own, for a scraper without a token (read at start)"`
	Telemetry          telemetry.Config       `yaml:"telemetry" desc:"OpenTelemetry traces of calls, exported over OTLP/HTTP; off unless an endpoint is set (read at start)"`
	Agent              Agent                  `yaml:"agent" desc:"The agent (legate agent run, the tool legate.agent.run): a model loop over the tools of one profile, on this machine, through the same call path as every client (read at start)"`
	Search             Search                 `yaml:"search" desc:"How legate.search_tools ranks tools: BM25 over their words, and, with an embeddings endpoint, the cosine of their embeddings fused with it (read at start)"`
	Results            Results                `yaml:"results" desc:"The whole of results cut to a token budget (a profile's result_budget_tokens, a call's _meta io.legate/result-budget-tokens), kept for their callers to read with legate.result_read (read at start)"`

	// Path is the file the configuration was read from, "" for none.
	Path string `yaml:"-"`

	// expanded are the values `${NAME}` was replaced by, by name (AsWritten).
	expanded map[string]string
}

// Profile is a named view of the catalog: what a principal assigned to it
// sees in tools/list and may call.
type Profile struct {
	Name     string   `yaml:"name" required:"true" desc:"Name tokens and JWTs refer to; unique"`
	Include  []string `yaml:"include" desc:"Keep only tools whose canonical name matches one of these globs (path.Match syntax); empty keeps all"`
	Exclude  []string `yaml:"exclude" desc:"Drop tools whose canonical name matches one of these globs"`
	MaxTools int      `yaml:"max_tools" min:"0" desc:"Keep at most this many tools, the first by canonical name (0: no limit)"`
	// ToolNames defaults to the top-level tool_names, applied by ApplyDefaults.
	ToolNames string `yaml:"tool_names" enum:"safe,canonical" desc:"safe or canonical names for this profile (default: the top-level tool_names)"`
	// Discovery defaults to list, applied by ApplyDefaults.
	Discovery string `yaml:"discovery" enum:"list,search" desc:"list: tools/list shows every tool of the view; search: it shows legate.search_tools and legate.approval_status, then each tool a search of the session found (every tool of the view can be called by name either way)"`
	// Connectors narrows the view to connector instances and upstreams.
	Connectors []ConnectorSelection `yaml:"connectors" desc:"Connector instances and upstreams whose tools the view keeps (empty: every source); an entry names one ({name: notion}) or selects those usable ({all: true, exclude: [jira], max: 10})"`
	// For lists the profiles whose callers may narrow to this one.
	For []string `yaml:"for" example:"[all]" desc:"Profiles whose callers may narrow their view to this one at /mcp/{name} (or /mcp with the Mcp-Legate-Profile header): the view is then the tools of both, never more. A caller of this profile, and one with none, may always"`
	// AllowMCPUI: apps show only where the upstream allows them too.
	AllowMCPUI bool `yaml:"allow_mcp_ui" desc:"Show MCP Apps (io.modelcontextprotocol/ui) of the upstreams that allow them (their allow_mcp_ui): tools' _meta.ui, ui:// resources, and app-only tools callable by an app; false: none of it"`
	// AutoAuth: nil is true.
	// ResultBudgetTokens: 0 is no budget; a call's _meta may lower it.
	ResultBudgetTokens int   `yaml:"result_budget_tokens" min:"0" desc:"Largest tool result, in estimated tokens, this profile's callers get: a larger one arrives cut (text by lines, JSON trimmed, media whole) around a notice, its whole kept for the caller to read page by page with legate.result_read (see results); a call's _meta io.legate/result-budget-tokens may lower it. 0: no budget (results pass whole), unless a call sets one. At least 256 when set"`
	AutoAuth           *bool `yaml:"auto_auth" default:"true" desc:"A call to a per_user instance or an OAuth-protected upstream (auth: oauth) the caller has not connected (or whose connection expired) asks the user to open the connect URL, through a client that supports URL-mode elicitation (2025-11-25) or an input_required result (2026-07-28), and goes on once connected; false: it fails with NOT_CONNECTED naming the URL. Only such a call starts a connection: nothing is opened on its own"`
}

// AsksToConnect reports whether the profile's calls ask their user to
// connect an instance or an OAuth-protected upstream (auto_auth).
func (p Profile) AsksToConnect() bool { return p.AutoAuth == nil || *p.AutoAuth }

// Panel is the `panel:` section.
type Panel struct {
	Listen string `yaml:"listen" example:"127.0.0.1:8081" desc:"Address (host:port) the panel listens on, apart from /mcp; empty leaves it off; $LEGATE_PANEL_ADDR overrides it. Logging in takes an admin or approver token (LEGATE_ADMIN_TOKEN, or a token of auth:)"`
}

// Results is the `results:` section: how the whole of a cut result is kept.
type Results struct {
	Retention legate.Duration `yaml:"retention" default:"1h" min:"0" desc:"How long the whole of a cut result is kept for its caller (legate.result_read, legate://results/{ref}); past it the notice's reference answers not found. 0 keeps nothing: a cut result's notice then says the rest cannot be read"`
	MaxBytes  int             `yaml:"max_bytes" default:"4194304" min:"1024" desc:"Most bytes of a cut result's text kept (4194304: 4 MiB); past it the rest is dropped, and the notice says so"`
	Spotlight bool            `yaml:"spotlight" desc:"Wrap the text of every connector's and upstream's result for the model between two markers under a notice that it is data written by others, not instructions (docs/provenance.md); every such result carries its provenance in _meta either way"`
}

// Search is the `search:` section.
type Search struct {
	EmbeddingsURL   string          `yaml:"embeddings_url" example:"http://127.0.0.1:11434/v1/embeddings" desc:"URL of an OpenAI-compatible embeddings endpoint (a local Ollama or vLLM, or OpenAI's); set, every tool of the catalog is embedded in the background when the catalog changes, and legate.search_tools also ranks tools by the cosine of their embeddings to the request's, fused with BM25 by reciprocal rank. Empty: BM25 alone"`
	EmbeddingsModel string          `yaml:"embeddings_model" example:"nomic-embed-text" desc:"Model name sent to the endpoint; required with embeddings_url"`
	EmbeddingsKey   *vault.Ref      `yaml:"embeddings_key" desc:"The endpoint's bearer key, as a reference: {env: NAME}, {file: PATH} or {vault: NAME}; none for a local server that asks for none"`
	EmbeddingsBatch int             `yaml:"embeddings_batch" default:"64" min:"1" desc:"Tools sent in one embeddings request (1 to 2048)"`
	Timeout         legate.Duration `yaml:"timeout" default:"5s" min:"0" desc:"Longest a search waits for its request's embedding; past it, and for 30 s after a failure, searches rank by BM25 alone and say why"`
}

// Metrics is the `metrics:` section. The series are also at /metrics on
// listen, where authentication, when on, asks for the admin role.
type Metrics struct {
	Listen string `yaml:"listen" example:"0.0.0.0:9464" desc:"Address (host:port) serving GET /metrics alone, without authentication, for a Prometheus scraper; empty leaves it off. Whoever reaches it reads every tenant's series, tool names included: keep it on a network only the scraper reaches"`
}

// Agent is the `agent:` section.
type Agent struct {
	Model        AgentModel      `yaml:"model" desc:"The model the loop talks to"`
	Profile      string          `yaml:"profile" desc:"Profile whose view of the catalog the loop sees when the caller names none (empty: the caller's own, else the top-level profile)"`
	Connectors   []string        `yaml:"connectors" example:"[host]" desc:"Connector instance or upstream ids whose tools the loop sees, within the profile's view (empty: every tool of the view)"`
	MaxTurns     int             `yaml:"max_turns" default:"24" min:"1" desc:"Model turns a run may take; at the last the run stops, keeping what it did, with stopped: max_turns"`
	MaxToolCalls int             `yaml:"max_tool_calls" default:"100" min:"1" desc:"Tool calls a run may make in all; a call past it is refused QUOTA_EXCEEDED and the run stops, keeping what it did, with stopped: max_tool_calls"`
	Deadline     legate.Duration `yaml:"deadline" default:"30m" min:"0" desc:"Longest a run may take, waits for approval included; past it the run stops with stopped: deadline"`
	MaxResult    int             `yaml:"max_result_bytes" default:"32768" min:"256" desc:"A tool result longer than this is cut, saying so, before the model sees it"`
	System       string          `yaml:"system" desc:"Text added to the system prompt of every run"`
	Retention    legate.Duration `yaml:"retention" default:"720h" min:"0" desc:"Runs that ended longer ago than this are deleted from the history, checked hourly (720h: 30 days; 0: kept forever)"`
}

// AgentProviders are the model providers the agent knows: anthropic
// through its own API, every other through the OpenAI chat completions API.
var AgentProviders = []string{"openai", "anthropic", "gemini", "openrouter", "groq", "deepseek", "mistral", "together", "fireworks", "xai", "ollama", "openai-compatible"}

// AgentModel is the agent's model profile.
type AgentModel struct {
	Provider       string          `yaml:"provider" default:"openai" enum:"openai,anthropic,gemini,openrouter,groq,deepseek,mistral,together,fireworks,xai,ollama,openai-compatible" desc:"Who serves the model: anthropic through its own API, every other through the OpenAI chat completions API"`
	Model          string          `yaml:"model" desc:"The model, as the provider spells it; it must support tool calling"`
	URL            string          `yaml:"url" desc:"Base URL of the API (default: the provider's); required for openai-compatible"`
	AccessToken    *vault.Ref      `yaml:"access_token" desc:"The API key, as a reference: {env: NAME}, {file: PATH} or {vault: NAME}; required except for ollama and openai-compatible"`
	Temperature    *float64        `yaml:"temperature" desc:"Sampling temperature (default 0.2)"`
	MaxTokens      int             `yaml:"max_tokens" min:"0" desc:"Cap on each model reply, in tokens (0: the provider's; anthropic: 4096)"`
	RequestTimeout legate.Duration `yaml:"request_timeout" default:"180s" min:"0" desc:"Deadline of one attempt of one model call, streaming included; a call past it is tried again"`
	MaxRetries     int             `yaml:"max_retries" default:"3" min:"0" desc:"How many times a model call that stalled, was dropped, or met a 5xx or 429 is tried again, with jittered exponential backoff; 400, 401, 403 and 404 are never retried"`
}

// ConnectorSelection is one entry of a profile's connectors: a named
// connector instance or upstream, or every usable one.
type ConnectorSelection struct {
	Name    string   `yaml:"name" desc:"A connector instance or upstream id: kept even when not connected (a call then says how to connect it), never capped away by max"`
	All     bool     `yaml:"all" desc:"Every connector instance and upstream that is connected: its credentials resolve, and an upstream is not down for longer than a minute"`
	Exclude []string `yaml:"exclude" desc:"With all: ids to leave out"`
	Max     int      `yaml:"max" min:"0" desc:"With all: keep at most this many, the first by id ignoring case (0: no limit); named entries do not count"`
	// CredentialsName picks one of the named instance's CredentialSets.
	CredentialsName string `yaml:"credentials_name" desc:"With name, a connector instance: which of its credential_sets this profile's calls use (default: its credentials)"`
	// AllowMCPUI: nil is false.
	AllowMCPUI *bool `yaml:"allow_mcp_ui" desc:"Show this profile's callers the MCP apps (the io.modelcontextprotocol/ui extension) of the named upstream, or with all: of every one it selects (default: the profile's allow_mcp_ui); a named entry's setting wins over all's"`
}

// The discovery modes of a profile.
const (
	DiscoveryList   = "list"
	DiscoverySearch = "search"
)

// Audit is the `audit:` section.
type Audit struct {
	Retention legate.Duration `yaml:"retention" default:"2160h" min:"0" desc:"Audit rows older than this are deleted (2160h: 90 days)"`
}

// Connector is one native connector instance.
type Connector struct {
	// ID defaults to the type, applied by ApplyDefaults.
	ID   string `yaml:"id" desc:"Instance id, [a-z0-9-]+ (default: the type); its tools are named <id>.<tool>"`
	Type string `yaml:"type" required:"true" desc:"A registered connector type (legate connector types)"`
	// Description is shown to clients in the server's instructions.
	Description string `yaml:"description" desc:"One line on what this instance is for, shown to clients in the server's instructions (default: the type's description)"`
	Tenant      string `yaml:"tenant" desc:"Tenant owning the instance: only its principals see its tools (empty: shared)"`
	// Config is kept as YAML and decoded against the type's own spec when
	// the instance is built.
	Config      yaml.Node            `yaml:"config" desc:"The type's own settings (legate connector types lists them)"`
	Credentials map[string]vault.Ref `yaml:"credentials" desc:"The type's credentials by name, as references only: {env: NAME}, {file: PATH} or {vault: NAME}"`
	// CredentialSets are named alternatives to some of Credentials, which
	// a profile's connectors entry picks by credentials_name.
	CredentialSets map[string]map[string]vault.Ref `yaml:"credential_sets" desc:"Named credential sets of the instance, each the type's credentials by name as references, like credentials: a profile's connectors entry {name: ID, credentials_name: SET} makes its callers' calls use SET's references in place of those of credentials of the same names (the others stay credentials')"`
	// CredentialsMode says whose credential a call uses: see connections.
	CredentialsMode string `yaml:"credentials_mode" enum:"shared,per_user,per_user_or_shared" default:"shared" desc:"Whose credential a call uses: shared (the instance's credentials, for every caller), per_user (the calling principal's own connection, made with legate connect ID; a caller without one gets NOT_CONNECTED), per_user_or_shared (the caller's connection when there is one, else the shared credentials)"`
	// OAuth is the OAuth app per-user connections are made with.
	OAuth *ConnectorOAuth `yaml:"oauth" desc:"The OAuth app people connect their own accounts with (authorization code flow with PKCE, run by Legate); per_user and per_user_or_shared need it or user_credential"`
	// UserCredential is the credential each person supplies themselves
	// when the instance has no OAuth app: see connections.
	UserCredential string `yaml:"user_credential" desc:"For per_user and per_user_or_shared without an oauth section: the type's credential each person supplies themselves, their own API key or personal access token, stored in the vault under their principal with legate connect ID --token (or the admin API)" example:"token"`
	// Environment says whether the instance works on real data.
	Environment string `yaml:"environment" enum:"production,sandbox" desc:"What the instance works against: production (real data, real side effects) or sandbox (a test account or mode); shown by legate connector show and the panel. Unset, it is what the credential or settings tell where the connector knows (a Stripe key's sk_test_ or sk_live_ prefix), else unknown; set, a credential that says otherwise makes the instance degraded" example:"production"`
	// Disabled keeps the instance defined but out of service.
	Disabled bool `yaml:"disabled" default:"false" desc:"Keep the instance defined but offer none of its tools (its status is disabled); its connection can still be tested"`
}

// The tool naming modes.
const (
	NamesSafe      = "safe"
	NamesCanonical = "canonical"
)

// DefaultListen is where `legate serve` listens without configuration
// (the default of listen).
const DefaultListen = "127.0.0.1:8080"

// IDPattern is what connector instance (and upstream) ids must match.
var IDPattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,62})$`)

// ReservedIDs are namespaces instance ids may not take.
var ReservedIDs = []string{"mcp", "legate"}

// ProfileNamed returns the profile named name; known is false when there
// is none of that name. The empty name is the default profile, always
// known, which narrows nothing.
func (f *File) ProfileNamed(name string) (p Profile, known bool) {
	for _, p := range f.Profiles {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, name == ""
}

// Validate checks the file without I/O and reports every problem at once,
// each naming its key path. It does not change the file: run it on the
// file as written, or after ApplyDefaults.
func (f *File) Validate() error {
	var errs []error
	bad := func(path, format string, args ...any) {
		errs = append(errs, &strictyaml.PathError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	errs = append(errs, strictyaml.Check(f, "", validatesItself)...)
	for _, l := range []struct{ key, addr string }{{"listen", f.Listen}, {"metrics.listen", f.Metrics.Listen}} {
		if l.addr == "" {
			continue
		}
		if _, port, err := net.SplitHostPort(l.addr); err != nil {
			bad(l.key, "want host:port, e.g. 127.0.0.1:8080")
		} else if n, err := strconv.ParseUint(port, 10, 16); err != nil && port != "" || n > 65535 {
			bad(l.key, "port %q is not a port number (0 to 65535)", port)
		}
	}
	errs = append(errs, f.validateConnectors()...)
	errs = append(errs, f.Auth.Validate("auth")...)
	errs = append(errs, f.Policy.Validate("policy")...)
	if n := f.Approvals.Notify; n != "" && !strings.Contains(n, ".") && !slices.ContainsFunc(f.Connectors, func(c Connector) bool { return c.id() == n }) {
		// A tool's canonical name is checked when the gateway builds its
		// catalog; an instance id (its send tool) can be checked here.
		bad("approvals.notify", "names no tool and no connector instance of this file: %q", n)
	}
	errs = append(errs, f.validateProfiles()...)
	if m := f.Agent.Model; m.Model != "" && m.Provider == "openai-compatible" && m.URL == "" {
		bad("agent.model.url", "is required for provider openai-compatible: the API's base URL, e.g. http://127.0.0.1:11434/v1")
	} else if m.Model != "" && m.AccessToken == nil && m.Provider != "ollama" && m.Provider != "openai-compatible" {
		bad("agent.model.access_token", "is required for provider %s: {env: NAME}, {file: PATH} or {vault: NAME}", m.Provider)
	}
	if t := f.Agent.Model.Temperature; t != nil && (*t < 0 || *t > 2) {
		bad("agent.model.temperature", "%v is not between 0 and 2", *t)
	}
	if p := f.Agent.Profile; p != "" && !slices.ContainsFunc(f.Profiles, func(q Profile) bool { return q.Name == p }) {
		bad("agent.profile", "no profile is named %q", p)
	}
	if u := f.Search.EmbeddingsURL; u != "" {
		if p, err := url.Parse(u); err != nil || p.Scheme != "http" && p.Scheme != "https" || p.Host == "" {
			bad("search.embeddings_url", "%q is not an http or https URL", u)
		}
		if f.Search.EmbeddingsModel == "" {
			bad("search.embeddings_model", "is required with embeddings_url")
		}
	} else if f.Search.EmbeddingsModel != "" || f.Search.EmbeddingsKey != nil {
		bad("search.embeddings_url", "is required with embeddings_model and embeddings_key: the endpoint they are for")
	}
	if n := f.Search.EmbeddingsBatch; n > 2048 {
		bad("search.embeddings_batch", "%d is over 2048", n)
	}
	errs = append(errs, f.Limits.validate("limits")...)
	errs = append(errs, f.Budgets.validate("budgets")...)
	errs = append(errs, f.validateUpstreams()...)
	for _, err := range f.Telemetry.Validate("telemetry") {
		key, msg, _ := strings.Cut(err.Error(), ": ")
		bad(key, "%s", msg)
	}
	return errors.Join(errs...)
}

// validatesItself lists the structs strictyaml.Check leaves alone: their
// own Validate checks them, since they are also checked apart from this
// file (stored upstreams and instances, the server's authenticator).
func validatesItself(t reflect.Type) bool {
	switch t {
	case reflect.TypeFor[upstream.Config](), reflect.TypeFor[policy.Config](), reflect.TypeFor[Connector](), reflect.TypeFor[Auth]():
		return true
	}
	return false
}

// id is the instance's id, its type when it has none.
func (c *Connector) id() string {
	if c.ID == "" {
		return c.Type
	}
	return c.ID
}

// validateSets checks the instance's credential_sets: each a set of the
// type's credentials, none required, since credentials supplies the rest.
func (c *Connector) validateSets(path string) []error {
	var errs []error
	t, ok := connectors.Lookup(c.Type)
	for _, name := range slices.Sorted(maps.Keys(c.CredentialSets)) {
		p := path + ".credential_sets." + name
		if !IDPattern.MatchString(name) {
			errs = append(errs, &strictyaml.PathError{Path: p, Msg: fmt.Sprintf("set name %q must match %s", name, IDPattern)})
		}
		for _, cred := range slices.Sorted(maps.Keys(c.CredentialSets[name])) {
			switch err := c.CredentialSets[name][cred].Validate(); {
			case ok && !t.HasCredential(cred):
				errs = append(errs, &strictyaml.PathError{Path: p + "." + cred, Msg: fmt.Sprintf("type %q takes no credential %q (it takes: %s)", c.Type, cred, strings.Join(t.CredentialNames(), ", "))})
			case err != nil:
				errs = append(errs, &strictyaml.PathError{Path: p + "." + cred, Msg: err.Error()})
			}
		}
	}
	return errs
}

func (f *File) validateConnectors() []error {
	var errs []error
	seen := map[string]string{}
	for i := range f.Connectors {
		c := &f.Connectors[i]
		path := fmt.Sprintf("connectors[%d]", i)
		errs = append(errs, ValidateInstance(path, c.id(), c.Type, c.Credentials, c.PerUserCredential())...)
		errs = append(errs, c.validateSets(path)...)
		errs = append(errs, c.ValidateOAuth(path)...)
		if prev, dup := seen[c.id()]; dup && c.id() != "" {
			errs = append(errs, &strictyaml.PathError{Path: path + ".id", Msg: fmt.Sprintf("duplicate id %q (also %s)", c.id(), prev)})
		}
		seen[c.id()] = path
	}
	return errs
}

func (f *File) validateProfiles() []error {
	var errs []error
	bad := func(path, format string, args ...any) {
		errs = append(errs, &strictyaml.PathError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	seen := map[string]string{}
	for i, p := range f.Profiles {
		path := fmt.Sprintf("profiles[%d]", i)
		if prev, dup := seen[p.Name]; dup && p.Name != "" {
			bad(path+".name", "duplicate name %q (also %s)", p.Name, prev)
		}
		seen[p.Name] = path
		for j, c := range p.Connectors {
			switch {
			case c.All == (c.Name != ""):
				bad(fmt.Sprintf("%s.connectors[%d]", path, j), "give either name or all: true")
			case !c.All && (len(c.Exclude) > 0 || c.Max > 0):
				bad(fmt.Sprintf("%s.connectors[%d]", path, j), "exclude and max go with all: true")
			case c.All && c.CredentialsName != "":
				bad(fmt.Sprintf("%s.connectors[%d].credentials_name", path, j), "goes with name: it picks a credential set of one connector instance")
			case c.CredentialsName != "":
				f.checkCredentialsName(fmt.Sprintf("%s.connectors[%d].credentials_name", path, j), c, bad)
			}
		}
		for _, l := range []struct {
			key   string
			globs []string
		}{{"include", p.Include}, {"exclude", p.Exclude}} {
			for j, g := range l.globs {
				if _, err := pathpkg.Match(g, ""); err != nil {
					bad(fmt.Sprintf("%s.%s[%d]", path, l.key, j), "bad glob %q", g)
				}
			}
		}
	}
	if _, ok := seen[f.Profile]; f.Profile != "" && !ok {
		bad("profile", "no profile is named %q", f.Profile)
	}
	for i, p := range f.Profiles {
		for j, name := range p.For {
			if _, ok := seen[name]; !ok {
				bad(fmt.Sprintf("profiles[%d].for[%d]", i, j), "no profile is named %q", name)
			}
		}
	}
	return errs
}

// checkCredentialsName checks that the named entry c picks a credential
// set its instance has; an instance of the store is checked at call time.
func (f *File) checkCredentialsName(path string, c ConnectorSelection, bad func(path, format string, args ...any)) {
	i := slices.IndexFunc(f.Connectors, func(in Connector) bool { return in.id() == c.Name })
	switch {
	case slices.ContainsFunc(f.Upstreams, func(u upstream.Config) bool { return u.ID == c.Name }):
		bad(path, "%q is an upstream: credentials_name picks a credential set of a connector instance", c.Name)
	case i < 0:
	case f.Connectors[i].CredentialSets[c.CredentialsName] == nil:
		bad(path, "connector %q has no credential set %q (its credential_sets: %s)", c.Name, c.CredentialsName, strings.Join(slices.Sorted(maps.Keys(f.Connectors[i].CredentialSets)), ", "))
	}
}

func (f *File) validateUpstreams() []error {
	var errs []error
	seen := map[string]string{}
	for i := range f.Upstreams {
		u := &f.Upstreams[i]
		path := fmt.Sprintf("upstreams[%d]", i)
		errs = append(errs, u.Validate(path)...)
		if prev, dup := seen[u.ID]; dup {
			errs = append(errs, &strictyaml.PathError{Path: path + ".id", Msg: fmt.Sprintf("duplicate id %q (also %s)", u.ID, prev)})
		}
		seen[u.ID] = path
	}
	return errs
}

// ValidateInstance checks an instance's id, type and credential references;
// the config section itself is checked when the instance is built. perUser
// names the credential each caller's own connection supplies (see
// Connector.PerUserCredential), which the instance may then leave unset.
func ValidateInstance(path, id, typ string, creds map[string]vault.Ref, perUser string) []error {
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
			if _, set := creds[c.Name]; c.Required && !set && c.Name != perUser {
				bad(path+".credentials."+c.Name, "is required")
			}
		}
	}
	return errs
}
