package sources

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/vault"
)

// InstanceDef is one connector instance as configured, from the config file
// or the store, before it is built.
type InstanceDef struct {
	ID          string
	Type        string
	Tenant      string
	Config      *yaml.Node
	Credentials map[string]vault.Ref
	// Origin says where the instance is defined, for people:
	// "config.yaml connectors[0]" or "the store (added 2026-11-30)".
	Origin string
	// Path is the key path errors about this instance start with.
	Path string
	// Mode is credentials_mode (default shared); OAuth is the OAuth app
	// per-user connections are made with, its defaults applied.
	Mode  string
	OAuth *config.ConnectorOAuth
}

// PerUserCredential is the credential the caller's own connection
// supplies, "" when the instance's credentials are shared.
func (d InstanceDef) PerUserCredential() string {
	if d.Mode == "" || d.Mode == config.CredentialsShared || d.OAuth == nil {
		return ""
	}
	return d.OAuth.Credential
}

// InstanceDefs merges the instances of the config file and of the store. An
// id defined in both places is an error naming both.
func InstanceDefs(ctx context.Context, cfg *config.File, st store.Store) ([]InstanceDef, error) {
	var defs []InstanceDef
	where := map[string]string{}
	file := "config"
	if cfg != nil && cfg.Path != "" {
		file = cfg.Path
	}
	if cfg != nil {
		for i, c := range cfg.Connectors {
			path := fmt.Sprintf("connectors[%d]", i)
			node := c.Config
			defs = append(defs, InstanceDef{
				ID: c.ID, Type: c.Type, Tenant: c.Tenant, Config: &node, Credentials: c.Credentials,
				Origin: file + " " + path, Path: path, Mode: c.CredentialsMode, OAuth: c.OAuthApp(),
			})
			where[c.ID] = file + " " + path
		}
	}
	stored, err := st.Connectors().List(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range stored {
		def, err := StoredDef(s)
		if err != nil {
			return nil, err
		}
		if prev, dup := where[s.ID]; dup {
			return nil, fmt.Errorf("connector id %q is defined twice: in %s and in %s; remove one (legate connector remove %s removes the stored one)", s.ID, prev, def.Origin, s.ID)
		}
		where[s.ID] = def.Origin
		defs = append(defs, def)
	}
	return defs, nil
}

// StoredDef turns a stored instance into its definition.
func StoredDef(s store.Connector) (InstanceDef, error) {
	def := InstanceDef{
		ID: s.ID, Type: s.Type,
		Origin: fmt.Sprintf("the store (added %s)", s.CreatedAt.Format("2006-01-02 15:04")),
		Path:   fmt.Sprintf("stored connector %q", s.ID),
	}
	var node yaml.Node
	if len(s.Config) > 0 {
		if err := yaml.Unmarshal(s.Config, &node); err != nil {
			return def, fmt.Errorf("%s: config: %w", def.Path, err)
		}
		def.Config = &node
	}
	if len(s.Credentials) > 0 {
		if err := json.Unmarshal(s.Credentials, &def.Credentials); err != nil {
			return def, fmt.Errorf("%s: credentials: %w", def.Path, err)
		}
	}
	var a Access
	if len(s.Access) > 0 {
		dec := json.NewDecoder(bytes.NewReader(s.Access))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			return def, fmt.Errorf("%s: access: %w", def.Path, err)
		}
	}
	// The same defaults and checks as an instance of the config file.
	c := config.Connector{ID: s.ID, Type: s.Type, CredentialsMode: a.CredentialsMode, OAuth: a.OAuth}
	if c.CredentialsMode == "" {
		c.CredentialsMode = config.CredentialsShared
	}
	if errs := c.ValidateOAuth(def.Path); len(errs) > 0 {
		return def, errors.Join(errs...)
	}
	def.Mode, def.OAuth = c.CredentialsMode, c.OAuthApp()
	return def, nil
}

// Access is whose credential a stored instance's calls use and the OAuth
// app per-user connections are made with: store.Connector's Access.
type Access struct {
	CredentialsMode string                 `json:"credentials_mode,omitempty"`
	OAuth           *config.ConnectorOAuth `json:"oauth,omitempty"`
}

// Build validates the definition and builds its instance.
func (d InstanceDef) Build() (connectors.Connector, error) {
	if errs := config.ValidateInstance(d.Path, d.ID, d.Type, d.Credentials, d.PerUserCredential()); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	t, _ := connectors.Lookup(d.Type)
	return connectors.Build(t, d.ID, d.Config, d.Path)
}

// Credentials resolve one instance's credential references at call time,
// for the calling tenant.
type Credentials struct {
	// Refs are the instance's references by credential name.
	Refs map[string]vault.Ref
	// Resolver reads them.
	Resolver *vault.Resolver
	// Tenant is the calling tenant, whose vault secrets are read.
	Tenant string
}

// Get resolves the credential name.
func (c Credentials) Get(ctx context.Context, name string) (string, error) {
	ref, ok := c.Refs[name]
	if !ok {
		return "", fmt.Errorf("credential %s: %w", name, connectors.ErrNoCredential)
	}
	v, err := c.Resolver.Resolve(ctx, c.Tenant, ref)
	if err != nil {
		msg := fmt.Sprintf("credential %s (%s) cannot be read", name, ref)
		if errors.Is(err, vault.ErrNotFound) {
			msg += ": " + err.Error() // names the reference and tenant, never a value
		}
		return "", &legate.Error{Code: legate.CodeAuthExpired, Message: msg, Err: err}
	}
	return v, nil
}

// Has reports whether the instance has the credential name.
func (c Credentials) Has(name string) bool { _, ok := c.Refs[name]; return ok }

var _ connectors.Credentials = Credentials{}
