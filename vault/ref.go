package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Ref is a reference to one secret. Exactly one field is set.
type Ref struct {
	// Env names an environment variable holding the value.
	Env string `yaml:"env,omitempty" json:"env,omitempty"`
	// File is the path of a file holding the value; one trailing newline is trimmed.
	File string `yaml:"file,omitempty" json:"file,omitempty"`
	// Vault names a secret in the vault (legate vault set NAME): the calling
	// tenant's own when it has one, else the shared one.
	Vault string `yaml:"vault,omitempty" json:"vault,omitempty"`
}

// ErrNotFound is returned when a referenced secret does not exist or is empty.
var ErrNotFound = errors.New("secret not found")

// Validate checks that exactly one source is named, and a vault name's form.
func (r Ref) Validate() error {
	n := 0
	for _, s := range []string{r.Env, r.File, r.Vault} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return errors.New("must name exactly one source: {env: NAME}, {file: PATH} or {vault: NAME}")
	}
	if r.Vault != "" && !NamePattern().MatchString(r.Vault) {
		return fmt.Errorf("vault: secret name %q must match %s", r.Vault, NamePattern())
	}
	if strings.HasPrefix(r.Vault, ConnectionsPrefix) {
		return fmt.Errorf("vault: %q is a person's connection (names under %s are): no credential may reference one", r.Vault, ConnectionsPrefix)
	}
	return nil
}

// ConnectionsPrefix starts the names of the secrets that hold people's
// own connections to connector instances (package connections): a
// credential reference never resolves to one, so that no instance
// configured by someone else can read a person's tokens.
const ConnectionsPrefix = "connections/"

// String describes the reference without its value: "env:NAME",
// "file:PATH", "vault:NAME".
func (r Ref) String() string {
	switch {
	case r.Env != "":
		return "env:" + r.Env
	case r.File != "":
		return "file:" + r.File
	case r.Vault != "":
		return "vault:" + r.Vault
	}
	return "(empty reference)"
}

// ParseRef parses the CLI form "env:NAME", "file:PATH" or "vault:NAME".
func ParseRef(s string) (Ref, error) {
	kind, val, ok := strings.Cut(s, ":")
	if !ok || val == "" {
		return Ref{}, fmt.Errorf("credential reference %q: want env:NAME, file:PATH or vault:NAME", s)
	}
	var r Ref
	switch kind {
	case "env":
		r = Ref{Env: val}
	case "file":
		r = Ref{File: val}
	case "vault":
		r = Ref{Vault: val}
	default:
		return Ref{}, fmt.Errorf("credential reference %q: unknown source %q (want env, file or vault)", s, kind)
	}
	if err := r.Validate(); err != nil {
		return Ref{}, fmt.Errorf("credential reference %q: %w", s, err)
	}
	return r, nil
}

// Resolver reads secret values from their references.
type Resolver struct {
	// LookupEnv defaults to os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Vault resolves {vault: NAME}; nil makes such references fail.
	Vault *Vault
	// Masks, if set, is given every value resolved, to be masked
	// wherever it appears.
	Masks *Masks
}

// Resolve returns the value ref points at, for tenant. Errors name the
// reference, never a value.
func (r *Resolver) Resolve(ctx context.Context, tenant string, ref Ref) (string, error) {
	v, err := r.resolve(ctx, tenant, ref)
	if err == nil && r != nil {
		r.Masks.Add(v)
	}
	return v, err
}

func (r *Resolver) resolve(ctx context.Context, tenant string, ref Ref) (string, error) {
	switch {
	case ref.Env != "":
		lookup := os.LookupEnv
		if r != nil && r.LookupEnv != nil {
			lookup = r.LookupEnv
		}
		v, ok := lookup(ref.Env)
		if !ok || v == "" {
			return "", fmt.Errorf("environment variable %s is not set or empty: %w", ref.Env, ErrNotFound)
		}
		return v, nil
	case ref.File != "":
		b, err := os.ReadFile(ref.File)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return "", fmt.Errorf("secret file %s does not exist: %w", ref.File, ErrNotFound)
			}
			return "", fmt.Errorf("reading secret file %s: %w", ref.File, err)
		}
		v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		if v == "" {
			return "", fmt.Errorf("secret file %s is empty: %w", ref.File, ErrNotFound)
		}
		return v, nil
	case ref.Vault != "":
		if err := ref.Validate(); err != nil {
			return "", err
		}
		if r == nil || r.Vault == nil {
			return "", fmt.Errorf("%s: no vault is open in this process", ref)
		}
		return r.Vault.Resolve(ctx, tenant, ref.Vault)
	}
	return "", fmt.Errorf("empty credential reference: %w", ErrNotFound)
}
