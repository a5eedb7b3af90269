package connectors

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/internal/strictyaml"
)

// DecodeConfig decodes an instance's config section into a new config struct
// of type t: defaults first, then the section strictly, then the required
// check. Errors name their key path below path (e.g. "connectors[0].config").
// A nil node decodes to the defaults.
func DecodeConfig(t Type, node *yaml.Node, path string) (any, error) {
	if t.Config == nil {
		if node != nil && node.Kind == yaml.MappingNode && len(node.Content) > 0 {
			return nil, &strictyaml.PathError{Path: path, Msg: fmt.Sprintf("type %q takes no configuration", t.Name)}
		}
		return nil, nil
	}
	cfg := t.Config()
	if err := strictyaml.ApplyDefaults(cfg); err != nil {
		return nil, fmt.Errorf("connectors: type %q: %w", t.Name, err)
	}
	var errs []error
	if node != nil {
		if err := strictyaml.Decode(node, cfg, path); err != nil {
			errs = append(errs, err)
		}
	}
	spec, _ := strictyaml.Spec(reflect.TypeOf(cfg))
	v := reflect.ValueOf(cfg).Elem()
	for _, f := range spec {
		if f.Required && v.Field(f.Index).IsZero() {
			errs = append(errs, &strictyaml.PathError{Path: joinPath(path, f.Name), Msg: "is required"})
		}
	}
	return cfg, errors.Join(errs...)
}

// Build decodes, constructs and validates an instance of type t. Every error
// is prefixed with path, so a user sees `connectors[0].config.base_url: ...`.
func Build(t Type, id string, node *yaml.Node, path string) (Connector, error) {
	return BuildIn(t, Instance{ID: id}, node, path)
}

// BuildIn is Build of the instance inst (its ID and StateDir; its Config
// is decoded from node).
func BuildIn(t Type, inst Instance, node *yaml.Node, path string) (Connector, error) {
	cfg, err := DecodeConfig(t, node, joinPath(path, "config"))
	if err != nil {
		return nil, err
	}
	inst.Config = cfg
	c, err := t.New(inst)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return nil, prefixFieldErrors(err, joinPath(path, "config"))
	}
	if err := CheckTools(c.Tools()); err != nil {
		return nil, fmt.Errorf("%s: connector type %q: %w", path, t.Name, err)
	}
	return c, nil
}

// prefixFieldErrors rewrites each *FieldError in a joined error with the
// key path of the instance config.
func prefixFieldErrors(err error, path string) error {
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	} else {
		list = []error{err}
	}
	out := make([]error, 0, len(list))
	for _, e := range list {
		var fe *legate.FieldError
		if errors.As(e, &fe) {
			out = append(out, &strictyaml.PathError{Path: joinPath(path, fe.Field), Msg: fe.Message})
			continue
		}
		out = append(out, fmt.Errorf("%s: %w", path, e))
	}
	return errors.Join(out...)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	if strings.HasPrefix(key, "[") {
		return path + key
	}
	return path + "." + key
}
