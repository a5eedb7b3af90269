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
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/auth/oauth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/policy"
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
	// Instances are the definitions of the connector instances built now.
	Instances func() []sources.InstanceDef
	Test      func(ctx context.Context, ids ...string) map[string]error
	Sessions  func() []admin.Session
	// CloseSession ends a session, reporting whether there was one.
	CloseSession func(id string) bool
	// Connect, without a server (Upstreams nil), builds the upstreams of
	// the store for one operation; done closes them.
	Connect func(ctx context.Context) (m *upstream.Manager, done func(), err error)
}

// Ops are the admin operations over a gateway's parts.
type Ops struct {
	p     Parts
	mu    sync.Mutex
	tests map[string]admin.ConnectorTest // last test by instance id
}

// New returns the operations over p.
func New(p Parts) *Ops { return &Ops{p: p, tests: map[string]admin.ConnectorTest{}} }

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
		Upstreams: ups, Connectors: o.instances(),
	}, nil
}

// instances are the connector instances built now, each with its number
// of tools in the catalog.
func (o *Ops) instances() []admin.ConnectorState {
	tools := map[string]int{}
	for _, e := range o.p.Catalog().Entries() {
		if id, ok := connectorOf(e.Source); ok {
			tools[id]++
		}
	}
	defs := o.p.Instances()
	out := make([]admin.ConnectorState, 0, len(defs))
	for _, d := range defs {
		out = append(out, admin.ConnectorState{ID: d.ID, Type: d.Type, Tenant: d.Tenant, Origin: d.Origin, Tools: tools[d.ID]})
	}
	return out
}

// connectorOf is the instance id of a native tool's catalog source
// (`connector "id" (...)`).
func connectorOf(source string) (string, bool) {
	s := subject("", "", "", "", source)
	return s.Connector, s.Connector != ""
}

// Upstreams lists the upstreams with their live state.
func (o *Ops) Upstreams(ctx context.Context) ([]admin.UpstreamStatus, error) {
	ups, err := o.p.Upstreams.Status(ctx)
	if err != nil {
		return nil, err
	}
	quarantined := map[string][]string{}
	for _, q := range o.p.Upstreams.Quarantine() {
		quarantined[q.Tool.Upstream] = append(quarantined[q.Tool.Upstream], q.Tool.Name)
	}
	out := make([]admin.UpstreamStatus, 0, len(ups))
	for _, u := range ups {
		out = append(out, admin.UpstreamStatus{
			ID: u.ID, Transport: u.Transport, Origin: u.Origin, Circuit: u.Circuit, Sessions: u.Sessions, Tools: u.Tools,
			Quarantined: quarantined[u.ID], RefreshedAt: u.RefreshedAt, CheckedAt: u.CheckedAt, LastError: u.LastError,
		})
	}
	return out, nil
}

// Connectors lists the instances the server runs, with their credential
// references and last test.
func (o *Ops) Connectors(ctx context.Context) ([]admin.Connector, error) {
	defs, err := sources.InstanceDefs(ctx, o.p.Config(), o.p.Store)
	if err != nil {
		return nil, err
	}
	tools := map[string]int{}
	for _, in := range o.instances() {
		tools[in.ID] = in.Tools
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]admin.Connector, 0, len(defs))
	for _, d := range defs {
		c := admin.Connector{ID: d.ID, Type: d.Type, Tenant: d.Tenant, Origin: d.Origin, Tools: tools[d.ID], CredentialsMode: d.Mode, OAuth: d.OAuth}
		if c.CredentialsMode == "" {
			c.CredentialsMode = config.CredentialsShared
		}
		for name, ref := range d.Credentials {
			if c.Credentials == nil {
				c.Credentials = map[string]string{}
			}
			c.Credentials[name] = ref.String()
		}
		if t, ok := o.tests[d.ID]; ok {
			c.LastTest = &t
		}
		out = append(out, c)
	}
	return out, nil
}

// AddConnector validates an instance, stores its secrets in the vault,
// and adds it to the store. An instance in the store is shared by every
// tenant: one for a tenant is refused (its place is the config file).
func (o *Ops) AddConnector(ctx context.Context, in admin.NewConnector) (c admin.Connector, err error) {
	if in.ID == "" {
		in.ID = in.Type
	}
	defer func() { o.audited(ctx, "connectors.add", "connector "+in.ID+" ("+in.Type+")", err) }()
	if in.Type == "" {
		return admin.Connector{}, fmt.Errorf("%w: type: required (GET /admin/v1/connector-types lists them)", admin.ErrInvalid)
	}
	if in.Tenant != "" {
		// The store keeps no tenant: a stored instance is shared, and one
		// added "for" a tenant would be seen by every tenant.
		return admin.Connector{}, fmt.Errorf("%w: tenant: an instance added through the API is shared by every tenant; a tenant's own instance goes in the config file", admin.ErrInvalid)
	}
	if slices.ContainsFunc(o.p.Config().Connectors, func(c config.Connector) bool { return c.ID == in.ID }) {
		return admin.Connector{}, fmt.Errorf("connector id %q is already defined in %s; pick another id: %w", in.ID, o.file(), store.ErrExists)
	}
	refs := map[string]vault.Ref{}
	for name, ref := range in.Credentials {
		if err := ref.Validate(); err != nil {
			return admin.Connector{}, fmt.Errorf("%w: credentials.%s: %v", admin.ErrInvalid, name, err)
		}
		refs[name] = ref
	}
	access := sources.Access{CredentialsMode: in.CredentialsMode, OAuth: in.OAuth}
	for name := range in.Secrets {
		if name != admin.SecretOAuthClient {
			refs[name] = vault.Ref{Vault: in.ID + "." + name}
			continue
		}
		if access.OAuth == nil || access.OAuth.ClientSecret != nil {
			return admin.Connector{}, fmt.Errorf("%w: secrets.%s: give the OAuth app's client secret once, here or as oauth.client_secret, with an oauth section", admin.ErrInvalid, name)
		}
		app := *access.OAuth
		app.ClientSecret = &vault.Ref{Vault: in.ID + "." + name}
		access.OAuth = &app
	}
	cfg := in.Config
	if cfg == nil {
		cfg = map[string]any{}
	}
	cfgJSON, _ := json.Marshal(cfg)
	credJSON, _ := json.Marshal(refs)
	accessJSON, _ := json.Marshal(access)
	rec := store.Connector{ID: in.ID, Type: in.Type, Config: cfgJSON, Credentials: credJSON, Access: accessJSON}
	def, err := sources.StoredDef(rec)
	if err != nil {
		return admin.Connector{}, fmt.Errorf("%w: %v", admin.ErrInvalid, err)
	}
	def.Path = "connector " + in.ID
	if _, err := def.Build(); err != nil {
		return admin.Connector{}, fmt.Errorf("%w: %v", admin.ErrInvalid, err)
	}
	if _, err := o.p.Store.Connectors().Get(ctx, in.ID); err == nil {
		return admin.Connector{}, fmt.Errorf("connector %q is in the store already; remove it first: %w", in.ID, store.ErrExists)
	}
	if len(in.Secrets) > 0 && o.p.Vault == nil {
		return admin.Connector{}, fmt.Errorf("%w: secrets: this server has no vault; give credentials as references", admin.ErrInvalid)
	}
	for name, value := range in.Secrets {
		if _, err := o.p.Vault.Set(ctx, "", in.ID+"."+name, []byte(value)); err != nil {
			return admin.Connector{}, fmt.Errorf("storing secret %s: %w", name, err)
		}
	}
	if err := o.p.Store.Connectors().Create(ctx, rec); err != nil {
		return admin.Connector{}, err
	}
	c = admin.Connector{ID: in.ID, Type: in.Type, Origin: "store", Credentials: map[string]string{}, CredentialsMode: def.Mode, OAuth: def.OAuth}
	for name, ref := range refs {
		c.Credentials[name] = ref.String()
	}
	return c, nil
}

// audited records a change in the audit log: who made it (the caller
// ctx names, admin.WithCaller, else Parts.Principal), what, to which
// target, and how it ended.
func (o *Ops) audited(ctx context.Context, action, target string, err error) {
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
func (o *Ops) file() string {
	if p := o.p.Config().Path; p != "" {
		return p
	}
	return "the config file"
}

// RemoveConnector removes a stored instance.
func (o *Ops) RemoveConnector(ctx context.Context, id string) (err error) {
	defer func() { o.audited(ctx, "connectors.remove", "connector "+id, err) }()
	err = o.p.Store.Connectors().Delete(ctx, id)
	if errors.Is(err, store.ErrNotFound) && slices.ContainsFunc(o.p.Config().Connectors, func(c config.Connector) bool { return c.ID == id }) {
		return &admin.Error{Status: 409, Message: fmt.Sprintf("connector %q is defined in the config file, not in the store: edit the file to remove it", id)}
	}
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no connector %q in the store: %w", id, store.ErrNotFound)
	}
	return err
}

// TestConnector runs an instance's connection test and keeps its outcome.
func (o *Ops) TestConnector(ctx context.Context, id string) (_ admin.ConnectorTest, err error) {
	defer func() { o.audited(ctx, "connectors.test", "connector "+id, err) }()
	t := admin.ConnectorTest{ID: id, At: time.Now().UTC()}
	var mu sync.Mutex
	ctx = connectors.WithReporter(ctx, func(l string) { mu.Lock(); t.Report = append(t.Report, l); mu.Unlock() })
	res := o.p.Test(ctx, id)
	err, ok := res[id]
	if !ok {
		return t, fmt.Errorf("no connector %q running (a stored one starts within a second): %w", id, store.ErrNotFound)
	}
	t.OK = err == nil
	if err != nil {
		t.Error = err.Error()
	}
	o.mu.Lock()
	o.tests[id] = t
	o.mu.Unlock()
	return t, nil
}

// AddUpstream validates an upstream definition and adds it to the store;
// with connect, it then connects to the upstream and caches its tools, and
// removes it again when that fails: an upstream that cannot be listed
// would be served with no tools and a failing circuit.
func (o *Ops) AddUpstream(ctx context.Context, raw json.RawMessage, connect bool) (_ admin.Refresh, err error) {
	var def upstream.Config
	defer func() { o.audited(ctx, "upstreams.add", "upstream "+def.ID, err) }()
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&def); err != nil {
		return admin.Refresh{}, fmt.Errorf("%w: an upstream definition: %v", admin.ErrInvalid, err)
	}
	added := admin.Refresh{ID: def.ID}
	if errs := def.Validate("upstream " + def.ID); len(errs) > 0 {
		return added, fmt.Errorf("%w: %v", admin.ErrInvalid, errors.Join(errs...))
	}
	if slices.ContainsFunc(o.p.Config().Upstreams, func(u upstream.Config) bool { return u.ID == def.ID }) {
		return added, fmt.Errorf("upstream id %q is already defined in %s; pick another id: %w", def.ID, o.file(), store.ErrExists)
	}
	b, _ := json.Marshal(def)
	if err := o.p.Store.Upstreams().Create(ctx, store.Upstream{ID: def.ID, Definition: b}); err != nil {
		if errors.Is(err, store.ErrExists) {
			return added, fmt.Errorf("upstream %q is already in the store; remove it first: %w", def.ID, err)
		}
		return added, err
	}
	if !connect {
		return added, nil
	}
	r, err := o.refresh(ctx, def.ID)
	if err != nil {
		if derr := o.p.Store.Upstreams().Delete(context.WithoutCancel(ctx), def.ID); derr != nil {
			err = fmt.Errorf("%w; and removing it again failed: %v", err, derr)
		}
		return added, &admin.Error{Status: 502, Message: fmt.Sprintf("upstream %q not added: %v", def.ID, err)}
	}
	return r, nil
}

// newUpstreamWait bounds the wait for a running server's watch of the
// store to build an upstream just added (it does within a second).
const newUpstreamWait = 10 * time.Second

// refresh connects to the upstream id, lists its tools and caches them:
// through the server's upstreams, or without a server through upstreams
// built for it (Parts.Connect).
func (o *Ops) refresh(ctx context.Context, id string) (admin.Refresh, error) {
	m := o.p.Upstreams
	if m == nil {
		built, done, err := o.p.Connect(ctx)
		if err != nil {
			return admin.Refresh{}, err
		}
		defer done()
		m = built
	}
	for deadline := time.Now().Add(newUpstreamWait); ; time.Sleep(100 * time.Millisecond) {
		if _, ok := m.Upstream(id); ok {
			break
		}
		if time.Now().After(deadline) {
			return admin.Refresh{}, fmt.Errorf("no upstream %q: %w", id, store.ErrNotFound)
		}
	}
	d, err := m.Refresh(ctx, id)
	if err != nil {
		return admin.Refresh{}, err
	}
	r := admin.Refresh{ID: id, Added: d.Added, Removed: d.Removed, Changed: d.Changed}
	for _, t := range m.Tools() {
		if t.Upstream == id {
			r.Tools++
		}
	}
	return r, nil
}

// RemoveUpstream removes a stored upstream and its cache.
func (o *Ops) RemoveUpstream(ctx context.Context, id string) (err error) {
	defer func() { o.audited(ctx, "upstreams.remove", "upstream "+id, err) }()
	err = o.p.Store.Upstreams().Delete(ctx, id)
	if errors.Is(err, store.ErrNotFound) && slices.ContainsFunc(o.p.Config().Upstreams, func(u upstream.Config) bool { return u.ID == id }) {
		return &admin.Error{Status: 409, Message: fmt.Sprintf("upstream %q is defined in the config file, not in the store: edit the file to remove it", id)}
	}
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no upstream %q in the store: %w", id, store.ErrNotFound)
	}
	return err
}

// RefreshUpstream lists an upstream's tools again.
func (o *Ops) RefreshUpstream(ctx context.Context, id string) (_ admin.Refresh, err error) {
	defer func() { o.audited(ctx, "upstreams.refresh", "upstream "+id, err) }()
	if _, ok := o.p.Upstreams.Upstream(id); !ok {
		return admin.Refresh{}, fmt.Errorf("no upstream %q: %w", id, store.ErrNotFound)
	}
	r, err := o.refresh(ctx, id)
	if err != nil {
		return admin.Refresh{}, &admin.Error{Status: 502, Message: fmt.Sprintf("upstream %s: %v", id, err)}
	}
	return r, nil
}

// Quarantine lists quarantined tools with both definitions.
func (o *Ops) Quarantine(_ context.Context, id string) ([]admin.QuarantinedTool, error) {
	if _, ok := o.p.Upstreams.Upstream(id); id != "" && !ok {
		return nil, fmt.Errorf("no upstream %q: %w", id, store.ErrNotFound)
	}
	out := []admin.QuarantinedTool{}
	for _, q := range o.p.Upstreams.Quarantine() {
		if id == "" || q.Tool.Upstream == id {
			out = append(out, quarantined(q))
		}
	}
	return out, nil
}

func quarantined(q upstream.Quarantined) admin.QuarantinedTool {
	now, _ := json.MarshalIndent(q.Tool.Def, "", "  ")
	var acc []byte
	if len(q.Pinned) > 0 {
		var v any
		if json.Unmarshal(q.Pinned, &v) == nil {
			acc, _ = json.MarshalIndent(v, "", "  ")
		}
	}
	return admin.QuarantinedTool{Upstream: q.Tool.Upstream, Tool: q.Tool.Canonical(), Name: q.Tool.Name,
		AcceptedHash: q.PinnedHash, Hash: q.Tool.Hash, Accepted: acc, Now: now}
}

// Accept releases quarantined tools of an upstream.
func (o *Ops) Accept(ctx context.Context, id, by string, tools []string) (got []string, err error) {
	defer func() {
		o.audited(ctx, "upstreams.accept", fmt.Sprintf("upstream %s: %s", id, strings.Join(got, ", ")), err)
	}()
	if _, ok := o.p.Upstreams.Upstream(id); !ok {
		return nil, fmt.Errorf("no upstream %q: %w", id, store.ErrNotFound)
	}
	got, err = o.p.Upstreams.Accept(ctx, id, by, tools...)
	if err != nil {
		return got, fmt.Errorf("%w: %v", admin.ErrInvalid, err)
	}
	return got, nil
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
	if !auth.TokenNamePattern.MatchString(p.Name) {
		return "", fmt.Errorf("%w: name %q: want %s", admin.ErrInvalid, p.Name, auth.TokenNamePattern)
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
