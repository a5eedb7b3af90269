// Package vault holds what Legate knows of secrets: references to them in
// configuration and their resolution at call time. A reference names where
// a secret lives ({env: NAME}, {file: PATH}); the value is read only when a
// call needs it and never enters tool arguments, results, errors or logs.
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
}

// ErrNotFound is returned when a referenced secret does not exist or is empty.
var ErrNotFound = errors.New("secret not found")

// Validate checks that exactly one source is named.
func (r Ref) Validate() error {
	n := 0
	for _, s := range []string{r.Env, r.File} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return errors.New("must name exactly one source: {env: NAME} or {file: PATH}")
	}
	return nil
}

// String describes the reference without its value: "env:NAME", "file:PATH".
func (r Ref) String() string {
	switch {
	case r.Env != "":
		return "env:" + r.Env
	case r.File != "":
		return "file:" + r.File
	}
	return "(empty reference)"
}

// ParseRef parses the CLI form "env:NAME" or "file:PATH".
func ParseRef(s string) (Ref, error) {
	kind, val, ok := strings.Cut(s, ":")
	if !ok || val == "" {
		return Ref{}, fmt.Errorf("credential reference %q: want env:NAME or file:PATH", s)
	}
	switch kind {
	case "env":
		return Ref{Env: val}, nil
	case "file":
		return Ref{File: val}, nil
	}
	return Ref{}, fmt.Errorf("credential reference %q: unknown source %q (want env or file)", s, kind)
}

// Resolver reads secret values from their references.
type Resolver struct {
	// LookupEnv defaults to os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Resolve returns the value ref points at, for tenant. Errors name the
// reference, never a value.
func (r *Resolver) Resolve(_ context.Context, _ string, ref Ref) (string, error) {
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
	}
	return "", fmt.Errorf("empty credential reference: %w", ErrNotFound)
}
