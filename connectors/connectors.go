// Package connectors is the contract every native connector implements and
// the registry connector types add themselves to.
//
// A connector type lives in its own package, connectors/<type>, and registers
// itself from init:
//
//	func init() {
//		connectors.Register(connectors.TypeOf(connectors.Info{
//			Name:        "webhook",
//			Description: "POST signed JSON payloads to one fixed URL",
//			Credentials: []connectors.Credential{{Name: "signing_secret", Description: "..."}},
//		}, New))
//	}
//
//	// New receives the decoded config, typed: no assertion, no foreign type.
//	func New(inst connectors.Instance, cfg *Config) (connectors.Connector, error)
//
// connectors/all/<type>.go blank-imports it; adding a type touches no other file.
//
// The lifecycle of an instance, in order:
//
//  1. strict decode of its config section into the type's Config struct
//     (unknown keys are errors; `default` tags fill unset fields);
//  2. New builds the instance from the decoded config;
//  3. Validate checks it without I/O and reports every field error at once;
//  4. Test, only at start-up on demand or from `legate connector test`, does I/O;
//  5. Tools lists the tools; each tool's Run executes one call with the
//     credentials resolved at call time.
//
// Optional abilities are small interfaces checked with a type assertion:
// [Closer] releases resources when the instance is dropped.
package connectors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/legate-mcp/legate"
)

// Type describes one connector type: its configuration, the credentials it
// takes, and how to build an instance.
type Type struct {
	// Name is the type name used in config (`type: slack`) and the default
	// instance id. It must match [a-z][a-z0-9-]*.
	Name string
	// Description is one line for `legate connector types`.
	Description string
	// Config returns a pointer to a new, zero config struct. Its fields carry
	// `yaml` names, `desc` descriptions, `default` values and `required:"true"`.
	// The struct is the schema: decoding, validation messages and the type
	// listing all come from it. Nil means the type takes no configuration.
	Config func() any
	// Credentials are the secret values the type may use, given in config as
	// references ({env: NAME}, {file: PATH}) and resolved at call time.
	Credentials []Credential
	// New builds an instance from its decoded config.
	New func(inst Instance) (Connector, error)
}

// Info is what a connector type says of itself beside its config and
// constructor; see [TypeOf].
type Info struct {
	// Name, Description and Credentials are those of [Type].
	Name        string
	Description string
	Credentials []Credential
}

// TypeOf returns the Type of a connector configured by a C, a struct whose
// fields carry the tags Type.Config describes. Its New decodes nothing
// itself: it hands newFunc the instance and its decoded *C, so a connector
// never asserts the type of Instance.Config. An Instance.Config that is not
// a non-nil *C (a caller bypassing [Build]) is an error, not a panic.
func TypeOf[C any](info Info, newFunc func(inst Instance, cfg *C) (Connector, error)) Type {
	t := Type{
		Name:        info.Name,
		Description: info.Description,
		Credentials: info.Credentials,
		Config:      func() any { return new(C) },
	}
	if newFunc != nil { // else Register refuses the type, naming it
		t.New = func(inst Instance) (Connector, error) {
			cfg, ok := inst.Config.(*C)
			if !ok || cfg == nil {
				return nil, fmt.Errorf("%s: config is %T, want %T", info.Name, inst.Config, cfg)
			}
			return newFunc(inst, cfg)
		}
	}
	return t
}

// Credential declares one secret a connector type accepts.
type Credential struct {
	Name        string
	Description string
	Required    bool
}

// Instance is what a type's New receives.
type Instance struct {
	// ID is the instance id; its tools are named <ID>.<tool>.
	ID string
	// Config is the pointer returned by Type.Config, filled from the config file.
	Config any
	// StateDir is the state directory of the process that builds the
	// instance, absolute, or "" when none was resolved (a configuration
	// checked on its own): defaults that live in it (the host connector's
	// skills library) and directories a connector must keep callers out of
	// start from it.
	StateDir string
	// Index is the instance's share of the store's indexed documents, for
	// an instance that indexes documents (kb) to share its index with the
	// other replicas; nil without a store (a connector used alone, or a
	// test): the index then lives in memory.
	Index IndexStore
}

// Connector is one configured instance of a connector type.
type Connector interface {
	// Validate checks the configuration without I/O. It returns every problem
	// at once, joined, each a *FieldError naming the field.
	Validate() error
	// Test checks that the instance can reach its system with its credentials.
	Test(ctx context.Context, creds Credentials) error
	// Tools lists the instance's tools. The list is fixed for the instance's life.
	Tools() []Tool
}

type reporterKey struct{}

// WithReporter returns a context under which a connector's Test tells fn
// what it checks, one line at a time, through [Reportf]: `legate
// connector test` prints them under the instance.
func WithReporter(ctx context.Context, fn func(line string)) context.Context {
	return context.WithValue(ctx, reporterKey{}, fn)
}

// Reportf tells the reporter of ctx, if any, one line of what a Test
// checked ("auth.test: ok, user legate on team Acme"). A line must hold no
// secret value.
func Reportf(ctx context.Context, format string, args ...any) {
	if fn, ok := ctx.Value(reporterKey{}).(func(string)); ok && fn != nil {
		fn(fmt.Sprintf(format, args...))
	}
}

// Closer is implemented by connectors holding resources (pools, clients) to
// release when the instance is dropped.
type Closer interface {
	Close() error
}

// Tool is one tool a connector instance offers.
type Tool struct {
	// Name is the tool's name within its instance: [a-z][a-z0-9_]*.
	Name        string
	Description string
	// InputSchema is the JSON Schema of the arguments, an object schema.
	// [NewTool] derives it from a Go struct.
	InputSchema json.RawMessage
	// OutputSchema, when set, is the JSON Schema of the result's structured
	// content, an object schema: clients check results against it, so every
	// successful Run must then return a Result whose Structured matches.
	// [Tool.Returning] derives it from a Go type.
	OutputSchema json.RawMessage
	// Class is the tool's operation class.
	Class legate.Class
	// ClassFor, when set, gives the class of one call from its arguments
	// (an HTTP GET reads, a POST writes). Its result is never below Class
	// for unparsable arguments: return Class then.
	ClassFor func(args json.RawMessage) legate.Class
	// Run executes one call.
	Run func(ctx context.Context, call *Call) (*legate.Result, error)
	// Toolset, when set, is the group the tool belongs to: an instance
	// offers it only when its config selects the group (see [SelectTools]).
	Toolset string
	// Aliases are other names a call may give the tool by (earlier names,
	// kept working): one with a dot is a canonical name of its own
	// ("gsheets.read_range"), one without is a name within the instance.
	// They are not listed; an alias two tools claim, or that a listed
	// tool's name holds, is honoured for neither.
	Aliases []string
}

// CanonicalAliases are t's aliases as canonical names, for the instance
// id: an alias without a dot is prefixed with the instance's id.
func (t *Tool) CanonicalAliases(instance string) []string {
	var out []string
	for _, a := range t.Aliases {
		if !strings.Contains(a, ".") {
			a = instance + "." + a
		}
		out = append(out, a)
	}
	return out
}

// ClassOf returns the class of a call to t with args.
func (t *Tool) ClassOf(args json.RawMessage) legate.Class {
	if t.ClassFor != nil {
		return t.ClassFor(args)
	}
	return t.Class
}

// Caller identifies who makes a call.
type Caller struct {
	Principal string
	Tenant    string
	Session   string
}

// Call is one tool call as a connector receives it.
type Call struct {
	// Tool is the tool's name within its instance.
	Tool string
	// Args is the arguments object as the client sent it.
	Args json.RawMessage
	// Caller made the call.
	Caller Caller
	// Credentials resolves the instance's secrets for this call.
	Credentials Credentials
	// OperationID is unique per call; a connector uses it as the idempotency
	// key of a write so that its own retries never write twice.
	OperationID string
	// Retried, when set, is told of each retry a connector makes to its
	// provider (for metrics); reason is short, e.g. "429" or "network".
	Retried func(reason string)
	// Key returns a secret the gateway derives for this instance alone,
	// never from configuration a user writes: a connector signs the
	// cursors and object refs it hands out with it, so that one minted for
	// another instance (or by anyone without the key) is refused. It is a
	// function so that only connectors that sign make the gateway read
	// (or create) the key; the same for the process's life. Nil, or a nil
	// result, when the gateway has none (tests): connectors/saas then uses
	// a key of its own that lives as long as the instance.
	Key func() []byte
	// Operations records the outcome of this instance's writes by
	// idempotency key (OperationID), durably, so that a retried call
	// returns the first outcome instead of writing again. Nil when the
	// gateway keeps none; connectors/saas then records in memory.
	Operations Operations
}

// Operations is the record of one instance's writes, by idempotency key.
// A connector claims a key before it writes and records the outcome after;
// the gateway implements it on its store, scoped to the instance.
type Operations interface {
	// Begin claims key for an attempt of at most lease, or says why not:
	// see [Operation]. Concurrent callers with one key never both claim it
	// while a lease runs.
	Begin(ctx context.Context, key string, lease time.Duration) (Operation, error)
	// Finish records the outcome of the claimed key's write; it is what
	// every later Begin of key returns. A second Finish keeps the first.
	Finish(ctx context.Context, key string, outcome json.RawMessage) error
	// Abandon ends the claim's lease without an outcome, so that the next
	// Begin claims it at once, as OpRetry: the write may or may not have
	// happened.
	Abandon(ctx context.Context, key string) error
}

// OperationState is what [Operations.Begin] found.
type OperationState string

// The states of an operation record.
const (
	// OpNew: the key was unknown; the caller holds it and writes.
	OpNew OperationState = "new"
	// OpRetry: an earlier attempt ended without an outcome (it failed
	// uncertainly, or its lease ran out); the caller holds the key and
	// must first find out whether the provider performed that write.
	OpRetry OperationState = "retry"
	// OpBusy: another attempt holds the key until Operation.LeaseUntil;
	// the caller must not write.
	OpBusy OperationState = "busy"
	// OpDone: the write happened; Operation.Outcome is its recorded result.
	OpDone OperationState = "done"
)

// Operation is the state of one idempotency key.
type Operation struct {
	State OperationState
	// Attempts counts the claims of the key, this one included.
	Attempts int
	// Started is when the key was first claimed: a reconciling connector
	// looks for its write from then on.
	Started time.Time
	// LeaseUntil is when the current claim ends (OpNew, OpRetry, OpBusy).
	LeaseUntil time.Time
	// Outcome is the recorded result (OpDone).
	Outcome json.RawMessage
}

// Retry tells c.Retried, if set, of one retry.
func (c *Call) Retry(reason string) {
	if c.Retried != nil {
		c.Retried(reason)
	}
}

// Credentials resolves an instance's secrets at call time. Values must never
// be put in results, errors or logs.
type Credentials interface {
	// Get returns the secret's value. A credential the instance does not have
	// returns an error wrapping ErrNoCredential.
	Get(ctx context.Context, name string) (string, error)
	// Has reports whether the instance configures the credential.
	Has(name string) bool
}

// ErrNoCredential is returned by Credentials.Get for a credential the
// instance does not configure. A connector with an optional credential
// checks Has first.
var ErrNoCredential = errors.New("credential not configured")

// CredentialError is the error of a connector (prefix, e.g. "http") whose
// credential name could not be resolved. A coded error from
// Credentials.Get keeps its code and message: CONFIG_ERROR for a reference
// that cannot be read (its message names the reference, env:NAME,
// file:PATH or vault:NAME, and what to set, never a value), NOT_CONNECTED
// or TRANSIENT for a caller's own connection that is missing or could not
// be read. A credential the instance does not configure (ErrNoCredential)
// is CONFIG_ERROR too, a deadline TIMEOUT; any other failure AUTH_EXPIRED.
func CredentialError(prefix, name string, err error) *legate.Error {
	msg := "credential " + name + " could not be resolved"
	var le *legate.Error
	if errors.As(err, &le) {
		if le.Message != "" {
			msg = le.Message
		}
		return &legate.Error{Code: le.Code, Message: prefix + ": " + msg, Details: le.Details, Err: err}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return &legate.Error{Code: legate.CodeOf(err), Message: prefix + ": " + msg + ": " + err.Error(), Err: err}
	case errors.Is(err, ErrNoCredential):
		return &legate.Error{Code: legate.CodeConfigError, Message: fmt.Sprintf("%s: the instance has no credential %s: add credentials.%s to its definition", prefix, name, name), Err: err}
	}
	return &legate.Error{Code: legate.CodeAuthExpired, Message: prefix + ": " + msg, Err: err}
}

var (
	mu    sync.RWMutex
	types = map[string]Type{}
	// TypeNamePattern is what a type name must match.
	typeName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	toolName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

// Register adds a connector type. It panics on an invalid or duplicate
// name or a missing constructor: registration happens in init, where a
// mistake must stop the program at once.
func Register(t Type) {
	mu.Lock()
	defer mu.Unlock()
	if !typeName.MatchString(t.Name) {
		panic(fmt.Sprintf("connectors: invalid type name %q", t.Name))
	}
	if t.New == nil {
		panic(fmt.Sprintf("connectors: type %q has no constructor", t.Name))
	}
	if _, dup := types[t.Name]; dup {
		panic(fmt.Sprintf("connectors: type %q registered twice", t.Name))
	}
	if t.Config != nil {
		if _, err := FieldsOf(t.Config()); err != nil {
			panic(fmt.Sprintf("connectors: type %q: %v", t.Name, err))
		}
	}
	types[t.Name] = t
}

// Lookup returns the registered type with that name.
func Lookup(name string) (Type, bool) {
	mu.RLock()
	defer mu.RUnlock()
	t, ok := types[name]
	return t, ok
}

// Types returns every registered type, sorted by name.
func Types() []Type {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]Type, 0, len(types))
	for _, t := range types {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// TypeNames returns the registered type names, sorted.
func TypeNames() []string {
	ts := Types()
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	return names
}

// CheckTools verifies the tools of an instance: valid unique names, a
// valid class, an object input schema and a Run function.
func CheckTools(tools []Tool) error {
	var errs []error
	seen := map[string]bool{}
	for _, t := range tools {
		switch {
		case !toolName.MatchString(t.Name):
			errs = append(errs, fmt.Errorf("tool %q: name must match %s", t.Name, toolName))
		case seen[t.Name]:
			errs = append(errs, fmt.Errorf("tool %q: declared twice", t.Name))
		}
		seen[t.Name] = true
		if !t.Class.Valid() {
			errs = append(errs, fmt.Errorf("tool %q: invalid class %q", t.Name, t.Class))
		}
		if t.Run == nil {
			errs = append(errs, fmt.Errorf("tool %q: no Run function", t.Name))
		}
		var schema struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil || schema.Type != "object" {
			errs = append(errs, fmt.Errorf("tool %q: input schema must be a JSON object schema of type \"object\"", t.Name))
		}
		if t.OutputSchema != nil {
			var out struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(t.OutputSchema, &out); err != nil || out.Type != "object" {
				errs = append(errs, fmt.Errorf("tool %q: output schema must be a JSON object schema of type \"object\"", t.Name))
			}
		}
		if strings.TrimSpace(t.Description) == "" {
			errs = append(errs, fmt.Errorf("tool %q: no description", t.Name))
		}
	}
	return errors.Join(errs...)
}

// CredentialNames returns the names of the type's credentials.
func (t Type) CredentialNames() []string {
	names := make([]string, len(t.Credentials))
	for i, c := range t.Credentials {
		names[i] = c.Name
	}
	return names
}

// HasCredential reports whether the type declares a credential of that name.
func (t Type) HasCredential(name string) bool {
	return slices.Contains(t.CredentialNames(), name)
}
