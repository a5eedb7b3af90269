package connections

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/vault"
)

// The statuses of a connection.
const (
	StatusConnected = "connected"
	StatusExpired   = "expired"
)

// RefreshMargin is how long before its expiry an access token is
// refreshed.
const RefreshMargin = time.Minute

// Prefix starts the vault name of every connection; no credential
// reference resolves to one.
const Prefix = vault.ConnectionsPrefix

// record is a connection as the vault keeps it.
type record struct {
	Instance     string    `json:"instance"`
	Principal    string    `json:"principal"`
	Tenant       string    `json:"tenant"`
	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Status       string    `json:"status"`
	ConnectedAt  time.Time `json:"connected_at"`
	RefreshedAt  time.Time `json:"refreshed_at,omitzero"`
	// Client is the registered client of an upstream's connection.
	Client *client `json:"client,omitempty"`
	// Kind is KindToken for a credential the person supplied themselves
	// (SetToken), "" for one an OAuth consent gave.
	Kind string `json:"kind,omitempty"`
}

// KindToken is the Kind of a connection whose credential the person
// supplied themselves: their own API key or personal access token.
const KindToken = "token"

// Info describes a connection, never its tokens.
type Info struct {
	Instance    string    `json:"instance"`
	Principal   string    `json:"principal"`
	Tenant      string    `json:"tenant,omitempty"`
	Status      string    `json:"status"`
	Expiry      time.Time `json:"expiry,omitzero"`
	ConnectedAt time.Time `json:"connected_at"`
	RefreshedAt time.Time `json:"refreshed_at,omitzero"`
	// Kind is KindToken for a credential the person supplied, "" for an
	// OAuth consent's.
	Kind string `json:"kind,omitempty"`
}

// status is the connection's status at now: expired once a refresh was
// refused, or once its access token expired with no refresh token.
func (r *record) status(now time.Time) string {
	if r.Status == StatusExpired || r.RefreshToken == "" && !r.Expiry.IsZero() && !now.Before(r.Expiry) {
		return StatusExpired
	}
	return StatusConnected
}

func (r *record) info(now time.Time) Info {
	return Info{Instance: r.Instance, Principal: r.Principal, Tenant: r.Tenant, Status: r.status(now), Expiry: r.Expiry, ConnectedAt: r.ConnectedAt, RefreshedAt: r.RefreshedAt, Kind: r.Kind}
}

// SecretName is the vault name of principal's connection to instance (in
// the principal's tenant).
func SecretName(instance, principal string) string {
	h := sha256.Sum256([]byte(principal))
	return Prefix + instance + "/" + hex.EncodeToString(h[:16])
}

// Options configure a [Manager].
type Options struct {
	// Vault keeps the connections and resolves the OAuth apps' secrets.
	Vault *vault.Vault
	// Instances are the gateway's connector instances, as now configured.
	Instances func() []sources.InstanceDef
	// PerUser, when set, says whether any instance has per-user
	// credentials without copying Instances (it is asked at every call).
	PerUser func() bool
	// Key derives the key states are sealed with (rooted in the vault, the
	// same on every replica and in the CLI).
	Key func(ctx context.Context) []byte
	// Upstreams, when set, gives the OAuth app of an id no connector
	// instance has: an OAuth-protected upstream MCP server, connected as
	// an instance is (redirect is "" for a refresh); ok is false for an
	// id it does not know.
	Upstreams func(ctx context.Context, id, redirect string) (app *UpstreamApp, ok bool, err error)
	// OnConnected, when set, is told of each connection made.
	OnConnected func(instance, tenant, principal string)
	// AnyUpstream, when set, reports whether an upstream acts as each
	// caller (then PerUser is true).
	AnyUpstream func() bool
	// OAuthUpstreams, when set, lists the upstreams Upstreams knows: what
	// people may connect besides instances.
	OAuthUpstreams func() []OAuthUpstream
	// Resource is auth.resource, whose origin is Legate's public URL.
	Resource string
	// Principal is the caller of a gateway without authentication.
	Principal string
	// Claims, when set, records each consent accepted, so that no replica
	// sharing the store accepts it again; without it, only this process
	// refuses a consent accepted before (until its state expires).
	Claims store.OperationStore
	// HTTPClient, when set, talks to the connector instances' token and
	// revocation endpoints (default: netguard, the hosts of the instance's
	// configured endpoints allowed on a private network, no other).
	// An upstream's come with its UpstreamApp.
	HTTPClient *http.Client
	// Masks, if set, is given every token and client secret a connection
	// holds, whenever one is read or issued: they are masked by value in
	// whatever the gateway returns or stores.
	Masks *vault.Masks
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// Manager keeps, resolves, refreshes and revokes connections. It is safe
// for concurrent use.
type Manager struct {
	opts   Options
	apps   apps
	sealer sealer
	locks  sync.Map // vault name + tenant -> *sync.Mutex: one refresh at a time
	// gen counts the connections made, revoked or expired by this
	// process: catalog views per principal are built again when it moves.
	gen atomic.Int64
	// claimed are the consents accepted, without Options.Claims.
	claimed claims
}

// New returns a manager.
func New(opts Options) *Manager {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Instances == nil {
		opts.Instances = func() []sources.InstanceDef { return nil }
	}
	m := &Manager{opts: opts, sealer: sealer{key: opts.Key}}
	m.apps.opts = &m.opts
	return m
}

// ConnectUpstreams lets people connect the upstreams ups knows (see
// Options.Upstreams, OnConnected, AnyUpstream and OAuthUpstreams); it is
// called before the manager is used.
func (m *Manager) ConnectUpstreams(ups func(ctx context.Context, id, redirect string) (*UpstreamApp, bool, error), onConnected func(id, tenant, principal string), anyUpstream func() bool, list func() []OAuthUpstream) {
	m.opts.Upstreams, m.opts.OnConnected, m.opts.AnyUpstream, m.opts.OAuthUpstreams = ups, onConnected, anyUpstream, list
}

// def is the instance id's definition.
func (m *apps) def(id string) (sources.InstanceDef, bool) {
	defs := m.opts.Instances()
	i := slices.IndexFunc(defs, func(d sources.InstanceDef) bool { return d.ID == id })
	if i < 0 {
		return sources.InstanceDef{}, false
	}
	return defs[i], true
}

// PerUser reports whether any instance acts as each caller.
func (m *Manager) PerUser() bool {
	if m.opts.AnyUpstream != nil && m.opts.AnyUpstream() {
		return true
	}
	if m.opts.PerUser != nil {
		return m.opts.PerUser()
	}
	return slices.ContainsFunc(m.opts.Instances(), func(d sources.InstanceDef) bool { return d.PerUserCredential() != "" })
}

// ViewKey is what a principal's catalog view depends on beyond its
// tenant and profile: "" when no instance acts as each caller, else the
// principal and the connections' generation.
func (m *Manager) ViewKey(principal string) string {
	if !m.PerUser() {
		return ""
	}
	return fmt.Sprintf("\x00%s\x00%d", principal, m.gen.Load())
}

// load reads principal's connection to instance; nil when there is none.
func (m *Manager) load(ctx context.Context, tenant, principal, instance string) (*record, error) {
	if m.opts.Vault == nil {
		return nil, errors.New("per-user connections need the vault")
	}
	b, _, err := m.opts.Vault.Get(ctx, tenant, SecretName(instance, principal))
	if errors.Is(err, vault.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil || r.Principal != principal || r.Instance != instance {
		return nil, fmt.Errorf("connection of %q to %s: the stored value is not a connection", principal, instance)
	}
	m.opts.Masks.Add(r.secrets()...)
	return &r, nil
}

// save writes r as its connection's only version: a refresh leaves no
// older tokens behind, and a connection takes one row whatever its age.
// secrets are r's tokens and client secret, to be masked.
func (r *record) secrets() []string {
	vs := []string{r.AccessToken, r.RefreshToken}
	if r.Client != nil {
		vs = append(vs, r.Client.Secret)
	}
	return vs
}

func (m *Manager) save(ctx context.Context, r *record) error {
	if m.opts.Vault == nil {
		return errors.New("per-user connections need the vault")
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = m.opts.Vault.Replace(ctx, r.Tenant, SecretName(r.Instance, r.Principal), b)
	return err
}

// Get describes principal's connection to instance; ok is false when
// there is none.
func (m *Manager) Get(ctx context.Context, tenant, principal, instance string) (Info, bool, error) {
	r, err := m.load(ctx, tenant, principal, instance)
	if err != nil || r == nil {
		return Info{}, false, err
	}
	return r.info(m.opts.Now()), true, nil
}

// Connected reports whether principal of tenant has a connection to
// instance that has not expired.
func (m *Manager) Connected(ctx context.Context, tenant, principal, instance string) bool {
	r, err := m.load(ctx, tenant, principal, instance)
	return err == nil && r != nil && r.status(m.opts.Now()) == StatusConnected
}

// Filter narrows a listing; empty fields match everything.
type Filter struct {
	Tenant    *string
	Principal string
	Instance  string
}

// List describes the connections f selects, by tenant, instance and
// principal.
func (m *Manager) List(ctx context.Context, f Filter) ([]Info, error) {
	if m.opts.Vault == nil {
		return nil, nil
	}
	all, err := m.opts.Vault.List(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[[2]string]bool{}
	var out []Info
	for _, s := range all {
		key := [2]string{s.Tenant, s.Name}
		if !strings.HasPrefix(s.Name, Prefix) || seen[key] || f.Tenant != nil && *f.Tenant != s.Tenant {
			continue
		}
		seen[key] = true
		if f.Instance != "" && !strings.HasPrefix(s.Name, Prefix+f.Instance+"/") {
			continue
		}
		b, _, err := m.opts.Vault.Get(ctx, s.Tenant, s.Name)
		if err != nil {
			return nil, err
		}
		var r record
		if json.Unmarshal(b, &r) != nil || SecretName(r.Instance, r.Principal) != s.Name || f.Principal != "" && f.Principal != r.Principal {
			continue
		}
		r.Tenant = s.Tenant
		out = append(out, r.info(m.opts.Now()))
	}
	slices.SortFunc(out, func(a, b Info) int {
		return strings.Compare(a.Tenant+"\x00"+a.Instance+"\x00"+a.Principal, b.Tenant+"\x00"+b.Instance+"\x00"+b.Principal)
	})
	return out, nil
}

// ErrNoConnection: the principal has no connection to the instance.
var ErrNoConnection = errors.New("no such connection")

// Revoke forgets principal's connection to instance, after asking the
// provider to revoke its tokens when the instance's app has a revoke_url
// (a provider that fails to is logged: the tokens are forgotten anyway).
func (m *Manager) Revoke(ctx context.Context, tenant, principal, instance string) error {
	r, err := m.load(ctx, tenant, principal, instance)
	if err != nil {
		return err
	}
	if r == nil {
		return fmt.Errorf("%s has no connection to %s (tenant %q): %w", principal, instance, tenant, ErrNoConnection)
	}
	// A credential the person supplied is theirs: forgotten, not revoked.
	if def, ok := m.apps.def(instance); ok && def.OAuth != nil && def.OAuth.RevokeURL != "" && r.Kind != KindToken {
		for _, tok := range []string{r.RefreshToken, r.AccessToken} {
			if tok != "" {
				if err := m.revokeAt(ctx, def, tok); err != nil {
					m.opts.Logger.Warn("the provider did not revoke a token of a connection; it is forgotten anyway", "instance", instance, "principal", principal, "error", err)
				}
			}
		}
	}
	if _, err := m.opts.Vault.Delete(ctx, tenant, SecretName(instance, principal)); err != nil && !errors.Is(err, vault.ErrNotFound) {
		return err
	}
	m.gen.Add(1)
	return nil
}

// revokeAt asks the provider to revoke token (RFC 7009).
func (m *Manager) revokeAt(ctx context.Context, def sources.InstanceDef, token string) error {
	form := url.Values{"token": {token}, "client_id": {def.OAuth.ClientID}}
	if secret, err := m.apps.clientSecret(ctx, def); err == nil && secret != "" {
		form.Set("client_secret", secret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, def.OAuth.RevokeURL, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+token) // Slack's auth.revoke takes the token so
	res, err := m.apps.guards.instance(m.opts.HTTPClient, def).Do(req)
	if err != nil {
		return errors.New(legate.NewSecrets(token).MaskString(err.Error()))
	}
	res.Body.Close()
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s answered %s", def.OAuth.RevokeURL, res.Status)
	}
	return nil
}

// clientSecret resolves the instance's OAuth client secret ("" for a
// public client).
func (m *apps) clientSecret(ctx context.Context, def sources.InstanceDef) (string, error) {
	if def.OAuth.ClientSecret == nil {
		return "", nil
	}
	return (&vault.Resolver{Vault: m.opts.Vault, Masks: m.opts.Masks}).Resolve(ctx, def.Tenant, *def.OAuth.ClientSecret)
}

// appOf is the instance's OAuth app, or an error naming what is missing.
func (m *apps) appOf(instance string) (sources.InstanceDef, error) {
	def, ok := m.def(instance)
	switch {
	case !ok:
		return def, legate.Errorf(legate.CodeNotFound, "no connector instance %q", instance)
	case def.OAuth == nil && def.PerUserCredential() != "":
		return def, legate.Errorf(legate.CodeInvalidArgument, "connector instance %q takes each person's own %s, not an OAuth consent: connect it with `legate connect %s --token`", instance, def.UserCredential, instance)
	case def.OAuth == nil:
		return def, legate.Errorf(legate.CodeInvalidArgument, "connector instance %q has no oauth app: its operator sets connectors[].oauth (and credentials_mode) to let people connect it", instance)
	}
	return def, nil
}
