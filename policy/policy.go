// Package policy decides what happens to a call before it runs: allow it,
// deny it, or hold it for a person's approval. Rules are ordered and the
// first that matches decides; a call no rule matches gets its class's
// default (read allow, everything else approve).
//
//	policy:
//	  defaults: {read: allow, draft: approve, write: approve, destructive: approve}
//	  rules:
//	    - {tool: "mcp.fs.read_*", action: allow}
//	    - {class: destructive, upstream: "*", action: deny, reason: "no deletes through agents"}
//	    - {tool: "web.call", action: approve, confirm: client}
//
// A call held for approval waits in the Inbox; the Executor holds it there
// for the call path's policy step, runs it once approved, runs requests
// approved after their call returned, and notifies new requests. It sees
// the gateway only through the functions of its ExecutorOptions.
package policy

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/internal/strictyaml"
)

// Action is what a decision does with a call.
type Action string

// The actions.
const (
	Allow   Action = "allow"
	Deny    Action = "deny"
	Approve Action = "approve"
)

// Confirmation modes of an approve rule.
const (
	// ConfirmInbox: an approver decides in the inbox (CLI, admin API). The default.
	ConfirmInbox = "inbox"
	// ConfirmClient: the user confirms in the client when its session can
	// answer (elicitation); otherwise the inbox.
	ConfirmClient = "client"
)

// Config is the `policy:` section of config.yaml; its tags are its spec
// (see package config).
type Config struct {
	Defaults map[legate.Class]Action `yaml:"defaults" default:"{read: allow, draft: approve, write: approve, destructive: approve}" desc:"Action by class for calls no rule matches; a class left out keeps its default"`
	Rules    []Rule                  `yaml:"rules" desc:"Rules tried in order; the first that matches a call decides"`
}

// Rule matches calls and gives them an action. Empty fields match
// anything; tool, principal, tenant, connector and upstream are globs
// (path.Match syntax: * does not cross a '/', dots are ordinary).
type Rule struct {
	Principal string       `yaml:"principal" desc:"Glob over the caller's principal"`
	Tenant    string       `yaml:"tenant" desc:"Glob over the caller's tenant"`
	Connector string       `yaml:"connector" desc:"Glob over native connector instance ids; * matches every native tool"`
	Upstream  string       `yaml:"upstream" desc:"Glob over upstream ids; * matches every upstream tool"`
	Tool      string       `yaml:"tool" desc:"Glob over canonical tool names (path.Match syntax; dots are ordinary)"`
	Class     legate.Class `yaml:"class" enum:"read,draft,write,destructive" desc:"The operation class matched"`
	Action    Action       `yaml:"action" required:"true" enum:"allow,deny,approve" desc:"What a matching call gets"`
	Reason    string       `yaml:"reason" desc:"Explanation given to the client with a deny or approve"`
	// Confirm has no default tag: only an approve rule may set it.
	Confirm string `yaml:"confirm" enum:"inbox,client" desc:"With action approve: inbox (default) has an approver decide; client asks the user in the client (elicitation) when its session can answer, else the inbox"`
}

// Subject is the call a decision is about.
type Subject struct {
	Principal string
	Tenant    string
	Tool      string // canonical name
	Class     legate.Class
	Connector string // the native instance id, "" for upstream tools
	Upstream  string // the upstream id, "" for native tools
}

// Decision is the outcome of evaluating a subject.
type Decision struct {
	Action Action
	// Rule is the index of the rule that matched, -1 for a default.
	Rule int
	// Reason explains a deny or approve to the client.
	Reason string
	// Confirm is where an approval is asked (ConfirmInbox or ConfirmClient).
	Confirm string
}

// RuleName names the rule for audit rows: "rules[2]" or "defaults.write".
func (d Decision) RuleName(class legate.Class) string {
	if d.Rule < 0 {
		return "defaults." + string(class)
	}
	return fmt.Sprintf("rules[%d]", d.Rule)
}

// DefaultActions are the defaults for classes the config does not name.
var DefaultActions = map[legate.Class]Action{
	legate.ClassRead:        Allow,
	legate.ClassDraft:       Approve,
	legate.ClassWrite:       Approve,
	legate.ClassDestructive: Approve,
}

// Policy is a validated, ready policy.
type Policy struct {
	defaults map[legate.Class]Action
	rules    []Rule
}

// New validates cfg (errors name their key below "policy") and returns the policy.
func New(cfg Config) (*Policy, error) {
	if errs := cfg.Validate("policy"); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	p := &Policy{defaults: map[legate.Class]Action{}, rules: cfg.Rules}
	for c, a := range DefaultActions {
		p.defaults[c] = a
	}
	for c, a := range cfg.Defaults {
		p.defaults[c] = a
	}
	return p, nil
}

// Validate checks the section without I/O.
func (cfg Config) Validate(at string) []error {
	var errs []error
	// A PathError names its key path apart from the message, so that a
	// key holding ": " or spaces still finds its line in the file.
	bad := func(key, format string, args ...any) {
		errs = append(errs, &strictyaml.PathError{Path: at + "." + key, Msg: fmt.Sprintf(format, args...)})
	}
	// In a stable order: the same file gives the same errors every run.
	for _, c := range slices.Sorted(maps.Keys(cfg.Defaults)) {
		a := cfg.Defaults[c]
		if !c.Valid() {
			bad("defaults."+string(c), "unknown class (read, draft, write, destructive)")
		}
		if !validAction(a) {
			bad("defaults."+string(c), "action must be allow, deny or approve, not %q", a)
		}
	}
	for i, r := range cfg.Rules {
		key := fmt.Sprintf("rules[%d]", i)
		if !validAction(r.Action) {
			bad(key+".action", "must be allow, deny or approve, not %q", r.Action)
		}
		if r.Class != "" && !r.Class.Valid() {
			bad(key+".class", "unknown class %q (read, draft, write, destructive)", r.Class)
		}
		if !slices.Contains([]string{"", ConfirmInbox, ConfirmClient}, r.Confirm) {
			bad(key+".confirm", "must be inbox or client, not %q", r.Confirm)
		}
		if r.Confirm != "" && r.Action != Approve {
			bad(key+".confirm", "applies to action approve only")
		}
		if r.Connector != "" && r.Upstream != "" {
			bad(key, "a rule matches native tools (connector) or upstream tools (upstream), not both")
		}
		for _, f := range [...][2]string{{"principal", r.Principal}, {"tenant", r.Tenant}, {"connector", r.Connector}, {"upstream", r.Upstream}, {"tool", r.Tool}} {
			if _, err := path.Match(f[1], ""); err != nil {
				bad(key+"."+f[0], "bad glob %q", f[1])
			}
		}
	}
	return errs
}

func validAction(a Action) bool { return a == Allow || a == Deny || a == Approve }

// Decide evaluates the rules for s.
func (p *Policy) Decide(s Subject) Decision {
	for i, r := range p.rules {
		if r.matches(s) {
			d := Decision{Action: r.Action, Rule: i, Reason: r.Reason, Confirm: r.Confirm}
			if d.Confirm == "" {
				d.Confirm = ConfirmInbox
			}
			return d
		}
	}
	return Decision{Action: p.defaults[s.Class], Rule: -1, Confirm: ConfirmInbox}
}

func (r Rule) matches(s Subject) bool {
	return glob(r.Principal, s.Principal) && glob(r.Tenant, s.Tenant) && glob(r.Tool, s.Tool) &&
		(r.Class == "" || r.Class == s.Class) &&
		(r.Connector == "" || s.Connector != "" && glob(r.Connector, s.Connector)) &&
		(r.Upstream == "" || s.Upstream != "" && glob(r.Upstream, s.Upstream))
}

// glob matches value against an optional pattern.
func glob(pattern, value string) bool {
	if pattern == "" {
		return true
	}
	ok, _ := path.Match(pattern, value)
	return ok
}
