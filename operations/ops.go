// Package operations is each operation an operator or a tool performs —
// decide an approval, add or remove a connector or an upstream, tokens… —
// implemented once, audited and measured once. The admin API (and the
// panel through it), the CLI and the server's in-client confirmation all
// call it, inside a running server over the parts the server hands in
// (the store, the upstream manager, the catalog and its views, the
// policy), or without one over the store alone. Additions go through the
// store, and a running server picks them up within a second.
package operations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/auth/oauth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/quota"
	"github.com/legate-mcp/legate/server/instances"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream"
	"github.com/legate-mcp/legate/vault"
)

// Parts are what the operations run over, handed in by the server.
type Parts struct {
	Store     store.Store
	Vault     *vault.Vault // nil: secrets cannot be stored
	Version   string
	Listen    string
	Started   time.Time
	Principal string // who calls without authentication
	Upstreams *upstream.Manager
	Catalog   func() *catalog.Catalog
	View      func(*auth.Principal) *catalog.Catalog
	Policy    func() *policy.Policy
	Config    func() *config.File
	// Inbox holds the approval requests; Decided, when set, observes the
	// time from a request to its decision.
	Inbox   *policy.Inbox
	Decided prometheus.Observer
	Audit   func(store.AuditRow)
	Ready   func() bool
	// Authenticated says inbound authentication is on: then a session
	// without an owner is not the anonymous Principal's.
	Authenticated bool
	// Instances are the definitions of the connector instances built now;
	// Natives the instances themselves, with their health (nil without a
	// server: a record then shows what the definitions say).
	Instances func() []sources.InstanceDef
	Natives   func() instances.Set
	Sessions  func() []admin.Session
	// CloseSession ends a session, reporting whether there was one.
	CloseSession func(id string) bool
	// Connect, without a server (Upstreams nil), builds the upstreams of
	// the store for one operation; done closes them.
	Connect func(ctx context.Context) (m *upstream.Manager, done func(), err error)
	// StateDir is the server's state directory, where the skills library
	// is kept unless a host connector names another (skills_dir).
	StateDir string
	// Instructions, when set, are the instructions the MCP server sends
	// clients now, the enabled skills' lines among them.
	Instructions func() string
}

// Ops are the operations over a gateway's parts, by job: approvals,
// tools, sessions, the audit log and tokens here; connectors
// (ConnectorOps), upstreams (UpstreamOps) and skills (SkillOps) in types of their own, whose
// methods Ops has.
type Ops struct {
	*parts
	*ConnectorOps
	*UpstreamOps
	*SkillOps
}

// parts are what the operations of every job share: the parts, and the
// audit of the changes made over them.
type parts struct{ p Parts }

// New returns the operations over p.
func New(p Parts) *Ops {
	s := &parts{p: p}
	return &Ops{parts: s, ConnectorOps: &ConnectorOps{parts: s, tests: map[string]admin.ConnectorTest{}}, UpstreamOps: &UpstreamOps{parts: s}, SkillOps: &SkillOps{parts: s}}
}

// ListApprovals lists approval requests.
func (o *Ops) ListApprovals(ctx context.Context, f store.ApprovalFilter) ([]*store.Approval, error) {
	return o.p.Store.Approvals().List(ctx, f)
}

// Approval returns one request.
func (o *Ops) Approval(ctx context.Context, id string) (*store.Approval, error) {
	return o.p.Store.Approvals().Get(ctx, id)
}

// Decide approves or denies a pending request (Approvals.Decide).
func (o *Ops) Decide(ctx context.Context, d admin.Decision) (*store.Approval, error) {
	return o.approvals().Decide(ctx, d)
}

// approvals are the decisions over o's parts.
func (o *Ops) approvals() *Approvals {
	return &Approvals{Inbox: o.p.Inbox, Audit: o.p.Audit, Decided: o.p.Decided}
}

// Audit records a row in the audit log.
func (o *Ops) Audit(row store.AuditRow) { o.p.Audit(row) }

// maxPendingCount bounds the pending requests Status counts.
const maxPendingCount = 100_000

// Status reports the live state of the gateway: each upstream's circuit as
// the server holds it now (the store keeps only what a refresh recorded).
func (o *Ops) Status(ctx context.Context) (*admin.Status, error) {
	ups, err := o.Upstreams(ctx)
	if err != nil {
		return nil, err
	}
	pending, err := o.p.Store.Approvals().List(ctx, store.ApprovalFilter{State: store.StatePending, AllTenants: true, Limit: maxPendingCount})
	if err != nil {
		return nil, err
	}
	return &admin.Status{
		Version: o.p.Version, StartedAt: o.p.Started, UptimeSeconds: time.Since(o.p.Started).Round(time.Second).Seconds(),
		Listen: o.p.Listen, Ready: o.p.Ready(), PendingApprovals: len(pending), Sessions: len(o.p.Sessions()),
		Upstreams: ups, Connectors: o.instances(), Profiles: o.profileURLs(),
	}, nil
}

// profileURLs are the configured profiles, each with the URL that serves
// its view.
func (o *parts) profileURLs() []admin.ProfileURL {
	out := []admin.ProfileURL{}
	for _, p := range o.p.Config().Profiles {
		out = append(out, admin.ProfileURL{Name: p.Name, URL: "http://" + o.p.Listen + "/mcp/" + url.PathEscape(p.Name), For: p.For})
	}
	return out
}

// instances are the connector instances built now, each with its number
// of tools in the catalog.
func (o *parts) instances() []admin.ConnectorState {
	tools := map[string]int{}
	for _, e := range o.p.Catalog().Entries() {
		if id, ok := connectorOf(e.Source); ok {
			tools[id]++
		}
	}
	defs := o.p.Instances()
	out := make([]admin.ConnectorState, 0, len(defs))
	for _, d := range defs {
		desc, health := o.live(d)
		r := Record(d, desc, health)
		out = append(out, admin.ConnectorState{ID: d.ID, Type: d.Type, Tenant: d.Tenant, Origin: d.Origin, Tools: tools[d.ID], Status: r.Status, Circuit: r.Circuit})
	}
	return out
}

// connectorOf is the instance id of a native tool's catalog source
// (`connector "id" (...)`).
func connectorOf(source string) (string, bool) {
	s := subject("", "", "", "", source)
	return s.Connector, s.Connector != ""
}

// audited records a change in the audit log: who made it (the caller
// ctx names, admin.WithCaller, else Parts.Principal), what, to which
// target, and how it ended.
func (o *parts) audited(ctx context.Context, action, target string, err error) {
	name, tenant, ok := admin.CallerOf(ctx)
	if !ok {
		name = o.p.Principal
	}
	row := store.AuditRow{Time: time.Now(), Principal: name, Tenant: tenant, Tool: "admin." + action,
		Source: "admin", Class: "write", Decision: "allow", Outcome: "ok", Detail: target}
	if err != nil {
		row.Outcome = admin.ErrorCode(err)
	}
	o.p.Audit(row)
}

// file names the config file in errors.
func (o *parts) file() string {
	if p := o.p.Config().Path; p != "" {
		return p
	}
	return "the config file"
}

// Tools lists the catalog, or the view of a principal, each tool with the
// policy's decision for a call to it by that principal.
func (o *Ops) Tools(_ context.Context, as *auth.Principal) ([]admin.Tool, error) {
	cat := o.p.Catalog()
	who := &auth.Principal{Name: o.p.Principal}
	if as != nil {
		cat, who = o.p.View(as), as
	}
	pol := o.p.Policy()
	out := make([]admin.Tool, 0, cat.Len())
	for _, e := range cat.Entries() {
		d := pol.Decide(subject(who.Name, who.Tenant, e.Canonical, e.Class, e.Source))
		def, _ := json.Marshal(e.Tool)
		out = append(out, admin.Tool{Name: e.Canonical, Wire: e.Wire, Source: e.Source, Tenant: e.Tenant, Class: string(e.Class),
			Decision: string(d.Action), Rule: d.RuleName(e.Class), Reason: d.Reason, Definition: def})
	}
	return out, nil
}

// subject is the policy subject of a call; source is the catalog entry's
// (`connector "id" (...)` or `upstream "id" (...)`).
func subject(principal, tenant, tool string, class legate.Class, source string) policy.Subject {
	s := policy.Subject{Principal: principal, Tenant: tenant, Tool: tool, Class: class}
	kind, rest, _ := strings.Cut(source, " ")
	id, _, _ := strings.Cut(strings.TrimPrefix(rest, `"`), `"`)
	switch kind {
	case "connector":
		s.Connector = id
	case "upstream":
		s.Upstream = id
	}
	return s
}

// Held explains why a request waits.
func (o *Ops) Held(_ context.Context, a *store.Approval) admin.Hold {
	var h admin.Hold
	source := ""
	if e, ok := o.p.Catalog().Lookup(a.Tool); ok {
		source = e.Source
	}
	d := o.p.Policy().Decide(subject(a.Principal, a.Tenant, a.Tool, legate.Class(a.Class), source))
	h.Decision, h.Rule, h.Reason = string(d.Action), d.RuleName(legate.Class(a.Class)), d.Reason
	for _, q := range o.p.Upstreams.Quarantine() {
		if q.Tool.Canonical() == a.Tool {
			qt := quarantined(q)
			h.Quarantine = &qt
		}
	}
	return h
}

// Sessions lists the live sessions.
func (o *Ops) Budgets(ctx context.Context) ([]quota.Usage, error) {
	return quota.NewBudgets(o.p.Config().Budgets, o.p.Store.Quotas(), nil).Usage(ctx)
}

func (o *Ops) Sessions(context.Context) ([]admin.Session, error) {
	list := o.p.Sessions()
	now := time.Now()
	for i := range list {
		// An HTTP session's owner is `kind "tenant" "name"`.
		var kind, tenant, name string
		if n, _ := fmt.Sscanf(list[i].Principal, "%s %q %q", &kind, &tenant, &name); n == 3 {
			list[i].Principal, list[i].Tenant, list[i].Credential = name, tenant, kind
		} else if list[i].Principal == "" && !o.p.Authenticated {
			list[i].Principal = o.p.Principal
		}
		if !list[i].OpenedAt.IsZero() {
			list[i].AgeSeconds = now.Sub(list[i].OpenedAt).Round(time.Second).Seconds()
		}
	}
	return list, nil
}

// CloseSession ends one session.
func (o *Ops) CloseSession(ctx context.Context, id string) (err error) {
	if !o.p.CloseSession(id) {
		err = fmt.Errorf("no session %q: %w", id, store.ErrNotFound)
	}
	o.audited(ctx, "sessions.close", "session "+id, err)
	return err
}

// QueryAudit reads the audit log.
func (o *Ops) QueryAudit(ctx context.Context, q store.AuditQuery) ([]store.AuditRow, error) {
	rows, err := o.p.Store.Audit().Query(ctx, q)
	if rows == nil {
		rows = []store.AuditRow{}
	}
	return rows, err
}

// Tokens lists the static tokens.
func (o *Ops) Tokens(ctx context.Context) ([]store.Token, error) { return o.p.Store.Tokens().List(ctx) }

// CreateToken makes a static token for p, whose profile, if it names
// one, the config must have.
func (o *Ops) CreateToken(ctx context.Context, p auth.Principal) (_ string, err error) {
	defer func() {
		o.audited(ctx, "tokens.create", fmt.Sprintf("token %s (role %s, tenant %q)", p.Name, p.Role, p.Tenant), err)
	}()
	if !auth.TokenNamePattern().MatchString(p.Name) {
		return "", fmt.Errorf("%w: name %q: want %s", admin.ErrInvalid, p.Name, auth.TokenNamePattern())
	}
	if p.Role != "" && !auth.IsRole(p.Role) {
		return "", fmt.Errorf("%w: role %q: want user, approver or admin", admin.ErrInvalid, p.Role)
	}
	if profiles := o.p.Config().Profiles; p.Profile != "" && !slices.ContainsFunc(profiles, func(pr config.Profile) bool { return pr.Name == p.Profile }) {
		names := make([]string, len(profiles))
		for i, pr := range profiles {
			names[i] = pr.Name
		}
		return "", fmt.Errorf("%w: profile %q: the config has no such profile (it has: %s)", admin.ErrInvalid, p.Profile, strings.Join(names, ", "))
	}
	tok, err := auth.CreateToken(ctx, o.p.Store.Tokens(), p)
	if errors.Is(err, store.ErrExists) {
		return "", fmt.Errorf("a token named %q exists (revoked tokens keep their names): pick another name: %w", p.Name, err)
	}
	return tok, err
}

// RevokeToken revokes a static token, or an OAuth grant (oauth:…): the
// next request bearing it is refused.
func (o *Ops) RevokeToken(ctx context.Context, name string) (err error) {
	defer func() { o.audited(ctx, "tokens.revoke", "token "+name, err) }()
	if strings.HasPrefix(name, oauth.GrantPrefix) {
		return oauth.RevokeGrant(ctx, o.p.Store, strings.Fields(name)[0])
	}
	return o.p.Store.Tokens().Revoke(ctx, name, time.Now())
}

var (
	_ admin.Ops       = (*Ops)(nil)
	_ admin.StatusOps = (*Ops)(nil)
	_ admin.ManageOps = (*Ops)(nil)
)

// AgentRuns lists the agent's runs.
func (o *Ops) AgentRuns(ctx context.Context, f store.AgentRunFilter) ([]store.AgentRun, error) {
	return o.p.Store.AgentRuns().List(ctx, f)
}

// AgentRun returns one run of the agent with its record.
func (o *Ops) AgentRun(ctx context.Context, id string) (store.AgentRun, error) {
	return o.p.Store.AgentRuns().Get(ctx, id)
}

var _ admin.AgentOps = (*Ops)(nil)
