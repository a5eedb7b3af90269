package operations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/vault"
)

// ConnectorOps are the operations on connector instances: list, add,
// remove, test.
type ConnectorOps struct {
	*parts
	mu    sync.Mutex
	tests map[string]admin.ConnectorTest // last test by instance id
}

// Connectors lists the instances the server runs, each with its record
// (ConnectorRecord) and last test.
func (o *ConnectorOps) Connectors(ctx context.Context) ([]admin.Connector, error) {
	defs, err := sources.InstanceDefs(ctx, o.p.Config(), o.p.Store)
	if err != nil {
		return nil, err
	}
	tools := o.toolCounts()
	out := make([]admin.Connector, 0, len(defs))
	for _, d := range defs {
		out = append(out, o.record(d, tools[d.ID]))
	}
	return out, nil
}

// Connector is the record of instance id, with its config: what `legate
// connector show`, GET /admin/v1/connectors/{id} and the panel show.
func (o *ConnectorOps) Connector(ctx context.Context, id string) (admin.Connector, error) {
	defs, err := sources.InstanceDefs(ctx, o.p.Config(), o.p.Store)
	if err != nil {
		return admin.Connector{}, err
	}
	i := slices.IndexFunc(defs, func(d sources.InstanceDef) bool { return d.ID == id })
	if i < 0 {
		return admin.Connector{}, fmt.Errorf("no connector %q: %w", id, store.ErrNotFound)
	}
	c := o.record(defs[i], o.toolCounts()[id])
	if n := defs[i].Config; n != nil && n.Kind != 0 {
		var cfg any
		if n.Decode(&cfg) == nil { // a config that does not decode is not shown
			c.Config, _ = json.Marshal(o.p.Config().AsWritten(cfg)) // ${NAME} shown, never its value
		}
	}
	return c, nil
}

// AddConnector validates an instance, stores its secrets in the vault,
// and adds it to the store. An instance in the store is shared by every
// tenant: one for a tenant is refused (its place is the config file).
func (o *ConnectorOps) AddConnector(ctx context.Context, in admin.NewConnector) (c admin.Connector, err error) {
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
	access := sources.Access{CredentialsMode: in.CredentialsMode, OAuth: in.OAuth, UserCredential: in.UserCredential}
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
	c = admin.Connector{ID: in.ID, Type: in.Type, Origin: "store", Credentials: map[string]string{}, CredentialsMode: def.Mode, OAuth: def.OAuth, UserCredential: def.UserCredential}
	for name, ref := range refs {
		c.Credentials[name] = ref.String()
	}
	return c, nil
}

// RemoveConnector removes a stored instance.
func (o *ConnectorOps) RemoveConnector(ctx context.Context, id string) (err error) {
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
func (o *ConnectorOps) TestConnector(ctx context.Context, id string) (_ admin.ConnectorTest, err error) {
	defer func() { o.audited(ctx, "connectors.test", "connector "+id, err) }()
	t := admin.ConnectorTest{ID: id, At: time.Now().UTC()}
	var mu sync.Mutex
	ctx = connectors.WithReporter(ctx, func(l string) { mu.Lock(); t.Report = append(t.Report, l); mu.Unlock() })
	var res map[string]error
	if o.p.Natives != nil {
		res = o.p.Natives().Test(ctx, id)
	}
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
