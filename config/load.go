package config

import (
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/internal/strictyaml"
)

// Load reads the file at path and returns its effective configuration:
// decoded strictly, defaults applied, validated. Its errors are those of
// Parse, each an *Error naming path and its line.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	f, err := Parse(b, os.LookupEnv)
	if err != nil {
		return nil, inFile(path, err)
	}
	f.Path = path
	return f, nil
}

// Parse decodes a configuration document, applies the defaults and
// validates the result, expanding `${NAME}` through lookup (nil: the
// process environment). Every problem is reported at once, in the order
// of the lines: unset variables, unknown keys and values of the wrong
// type at every level (each connector instance's `config:` included,
// against its type's spec), and what validation finds in the rest; each
// is an *Error carrying its line. A problem found while decoding hides
// none found later, and validation does not report again a key whose
// value could not be decoded.
func Parse(b []byte, lookup func(string) (string, bool)) (*File, error) {
	f, doc, errs, err := decode(b, lookup)
	if err != nil {
		return nil, err
	}
	if err := f.ApplyDefaults(); err != nil {
		return nil, err
	}
	errs = append(errs, besides(errs, flatten(f.Validate()))...)
	errs = append(errs, besides(errs, f.instanceConfigErrors())...)
	return f, locate(doc, errs)
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
// validation: the file as written. Its errors are each an *Error
// carrying its line.
func Decode(b []byte, lookup func(string) (string, bool)) (*File, error) {
	f, doc, errs, err := decode(b, lookup)
	if err != nil {
		return nil, err
	}
	if err := locate(doc, errs); err != nil {
		return nil, err
	}
	return f, nil
}

// decode expands and decodes b, returning its parsed document and every
// problem found at a key path; err is a document that is not YAML.
func decode(b []byte, lookup func(string) (string, bool)) (f *File, doc *yaml.Node, errs []error, err error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	f = &File{}
	n, err := strictyaml.Parse(b)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("invalid YAML: %w", err)
	}
	if len(n.Content) == 0 {
		return f, n, nil, nil
	}
	// An unset variable leaves its value empty, so decoding goes on and
	// finds the problems of the rest of the file too.
	expanded := map[string]string{}
	errs = flatten(strictyaml.Expand(n, "", func(name string) (string, bool) {
		v, ok := lookup(name)
		if ok && v != "" {
			expanded[name] = v
		}
		return v, ok
	}))
	errs = append(errs, besides(errs, flatten(strictyaml.Decode(n, f, "")))...)
	f.expanded = expanded
	return f, n, errs, nil
}

// flatten lists the errors err joins (errors.Join, nested), nil for none.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, flatten(e)...)
	}
	return out
}

// besides is later, without the errors at a key path (or below one) that
// earlier reports already: a value that could not be decoded is left
// zero, and is not to be reported again as missing or out of range.
func besides(earlier, later []error) []error {
	var out []error
	for _, e := range later {
		p := keyPath(e)
		if p == "" || !isUnder(p, earlier) {
			out = append(out, e)
		}
	}
	return out
}

// isUnder reports whether key path p is one of errs' paths, or below one.
func isUnder(p string, errs []error) bool {
	for _, e := range errs {
		q := keyPath(e)
		if q != "" && (p == q || len(p) > len(q) && p[:len(q)] == q && (p[len(q)] == '.' || p[len(q)] == '[')) {
			return true
		}
	}
	return false
}

// instanceConfigErrors decodes each connector instance's `config:` against
// its type's spec (strictly, defaults applied, required keys checked), as
// building the instance will, so that its unknown keys and bad values are
// reported with the rest of the file. An unknown type is Validate's error.
func (f *File) instanceConfigErrors() []error {
	var errs []error
	for i := range f.Connectors {
		c := &f.Connectors[i]
		if _, err := c.decodeConfig(fmt.Sprintf("connectors[%d].config", i)); err != nil {
			errs = append(errs, flatten(err)...)
		}
	}
	return errs
}
