package config

import (
	"fmt"
	"os"

	"github.com/legate-mcp/legate/internal/strictyaml"
)

// Load reads the file at path and returns its effective configuration:
// decoded strictly, defaults applied, validated.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	f, err := Parse(b, os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Path = path
	return f, nil
}

// Parse decodes a configuration document, applies the defaults and
// validates the result, expanding `${NAME}` through lookup (nil: the
// process environment).
func Parse(b []byte, lookup func(string) (string, bool)) (*File, error) {
	f, err := Decode(b, lookup)
	if err != nil {
		return nil, err
	}
	if err := f.ApplyDefaults(); err != nil {
		return nil, err
	}
	return f, f.Validate()
}

// Default returns the effective configuration of an empty file.
func Default() *File {
	f := &File{}
	if err := f.ApplyDefaults(); err != nil {
		panic(err) // the tags are constants, checked by the tests
	}
	return f
}

// Decode decodes a configuration document strictly, expanding `${NAME}`
// through lookup (nil: the process environment), without defaults or
// validation: the file as written.
func Decode(b []byte, lookup func(string) (string, bool)) (*File, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	f := &File{}
	doc, err := strictyaml.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	if len(doc.Content) == 0 {
		return f, nil
	}
	if err := strictyaml.Expand(doc, "", lookup); err != nil {
		return nil, err
	}
	if err := strictyaml.Decode(doc, f, ""); err != nil {
		return nil, err
	}
	return f, nil
}
