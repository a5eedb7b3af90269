package sources

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/telemetry/spans"
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
	// CredentialSets are the instance's named credential sets (config
	// file instances only), which profiles pick (Credentials.Picking).
	CredentialSets map[string]map[string]vault.Ref
	// Origin says where the instance is defined, for people:
	// "config.yaml connectors[0]" or "the store, added 2026-11-30 12:00",
	// without parentheses, since it is often shown inside some.
	Origin string
	// Path is the key path errors about this instance start with.
	Path string
	// Mode is credentials_mode (default shared); OAuth is the OAuth app
	// per-user connections are made with, its defaults applied.
	Mode  string
	OAuth *config.ConnectorOAuth
	// UserCredential is the credential people supply themselves, for a
	// per-user instance without an OAuth app (user_credential).
	UserCredential string
	// StateDir is the state directory the instance is built in
	// (connectors.Instance's StateDir).
	StateDir string
	// KB is the store the instance's indexed documents are shared in
	// (connectors.Instance's Index), nil for none.
	KB store.KBStore
	// Environment is the config's environment ("" unset); Disabled says
	// the instance offers no tools.
	Environment string
	Disabled    bool
}

// PerUserCredential is the credential the caller's own connection
// supplies, "" when the instance's credentials are shared.
func (d InstanceDef) PerUserCredential() string {
	switch {
	case d.Mode == "" || d.Mode == config.CredentialsShared:
		return ""
	case d.OAuth == nil:
		return d.UserCredential
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
				ID: c.ID, Type: c.Type, Tenant: c.Tenant, Config: &node, Credentials: c.Credentials, CredentialSets: c.CredentialSets,
				Origin: file + " " + path, Path: path, Mode: c.CredentialsMode, OAuth: c.OAuthApp(), UserCredential: c.UserCredential,
				Environment: c.Environment, Disabled: c.Disabled,
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
		Origin: StoredOrigin(s.CreatedAt),
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
	c := config.Connector{ID: s.ID, Type: s.Type, CredentialsMode: a.CredentialsMode, OAuth: a.OAuth, UserCredential: a.UserCredential, Environment: a.Environment, Disabled: a.Disabled}
	if c.CredentialsMode == "" {
		c.CredentialsMode = config.CredentialsShared
	}
	if errs := c.ValidateOAuth(def.Path); len(errs) > 0 {
		return def, errors.Join(errs...)
	}
	def.Mode, def.OAuth, def.UserCredential = c.CredentialsMode, c.OAuthApp(), c.UserCredential
	def.Environment, def.Disabled = c.Environment, c.Disabled
	return def, nil
}

// Access is whose credential a stored instance's calls use and the OAuth
// app per-user connections are made with: store.Connector's Access.
type Access struct {
	CredentialsMode string                 `json:"credentials_mode,omitempty"`
	OAuth           *config.ConnectorOAuth `json:"oauth,omitempty"`
	// UserCredential is the credential people supply themselves
	// (user_credential), for a per-user instance without an OAuth app.
	UserCredential string `json:"user_credential,omitempty"`
	// Environment and Disabled are the instance's environment and
	// disabled, as a config file's instance has them.
	Environment string `json:"environment,omitempty"`
	Disabled    bool   `json:"disabled,omitempty"`
}

// Build validates the definition and builds its instance.
func (d InstanceDef) Build() (connectors.Connector, error) {
	if errs := config.ValidateInstance(d.Path, d.ID, d.Type, d.Credentials, d.PerUserCredential()); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	t, _ := connectors.Lookup(d.Type)
	return connectors.BuildIn(t, connectors.Instance{ID: d.ID, StateDir: d.StateDir, Index: IndexStore(d.KB, d.ID)}, d.Config, d.Path)
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
	// Path is where the instance is defined (InstanceDef.Path:
	// "connectors[1]", `stored connector "web"`), which an error names.
	Path string
	// Set names the credential set a profile picked, SetRefs its
	// references, read before Refs.
	Set     string
	SetRefs map[string]vault.Ref
	// Err, when set, is the error of every Get: the set picked is not one
	// of the instance's.
	Err error
}

// Picking is c with the credential set of def named set (a profile's
// credentials_name; "" for none) read before its Refs.
func (c Credentials) Picking(def InstanceDef, set string) Credentials {
	if set == "" {
		return c
	}
	refs, ok := def.CredentialSets[set]
	if !ok {
		c.Err = &legate.Error{Code: legate.CodeConfigError, Message: fmt.Sprintf("the caller's profile picks the credential set %q (credentials_name) of %s, which has none of that name: add it to its credential_sets or change the profile", set, c.where())}
	}
	c.Set, c.SetRefs = set, refs
	return c
}

// where names the instance's definition for people.
func (c Credentials) where() string { return cmp.Or(c.Path, "the instance") }

// ref is the reference of the credential name: the picked set's, else
// the instance's.
func (c Credentials) ref(name string) (vault.Ref, bool) {
	if ref, ok := c.SetRefs[name]; ok {
		return ref, true
	}
	ref, ok := c.Refs[name]
	return ref, ok
}

// Get resolves the credential name. A reference that cannot be read (an
// unset variable, a missing file or vault secret) is CONFIG_ERROR naming
// the reference and what the operator can do, never a value.
func (c Credentials) Get(ctx context.Context, name string) (string, error) {
	if c.Err != nil {
		return "", c.Err
	}
	ref, ok := c.ref(name)
	if !ok {
		return "", fmt.Errorf("credential %s: %w", name, connectors.ErrNoCredential)
	}
	v, err := c.Resolver.Resolve(ctx, c.Tenant, ref)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		msg := fmt.Sprintf("credential %s (%s) cannot be read", name, ref)
		if errors.Is(err, vault.ErrNotFound) || errors.Is(err, os.ErrPermission) {
			msg += ": " + err.Error() // names the reference and tenant, never a value
		}
		return "", &legate.Error{Code: legate.CodeConfigError, Message: msg + "; " + c.remedy(name, ref), Err: err}
	}
	spans.Set(ctx, "credential."+name, ref.String()) // the reference, never its value
	return v, nil
}

// remedy says what an operator does about the reference ref of the
// credential name that cannot be read.
func (c Credentials) remedy(name string, ref vault.Ref) string {
	where := c.Path + ".credentials." + name
	if _, ok := c.SetRefs[name]; ok {
		where = c.Path + ".credential_sets." + c.Set + "." + name
	}
	if c.Path == "" {
		where = "the instance's credentials." + name
	} else if strings.HasPrefix(c.Path, "stored ") {
		where = "the credential " + name + " of the " + c.Path
	}
	switch {
	case ref.Env != "":
		return fmt.Sprintf("set the environment variable %s where the server runs, or change %s", ref.Env, where)
	case ref.File != "":
		return fmt.Sprintf("write the secret to %s (readable by the server), or change %s", ref.File, where)
	case ref.Vault != "":
		set := "legate vault set " + ref.Vault
		if c.Tenant != "" {
			set += " (--tenant " + c.Tenant + " for this tenant only)"
		}
		return fmt.Sprintf("set the secret with %s, or change %s", set, where)
	}
	return "set " + where
}

// Has reports whether the instance has the credential name.
func (c Credentials) Has(name string) bool { _, ok := c.ref(name); return ok }

var _ connectors.Credentials = Credentials{}
