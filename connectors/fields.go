package connectors

import (
	"fmt"
	"reflect"

	"github.com/legate-mcp/legate/internal/strictyaml"
)

// Field describes one configuration field of a connector type. Fields are
// read from the type's config struct tags, never declared by hand:
//
//	BaseURL string `yaml:"base_url" required:"true" desc:"URL every path is relative to"`
//	Timeout Duration `yaml:"timeout" default:"30s" desc:"Per-request timeout"`
type Field struct {
	Name        string `json:"name"`
	Kind        string `json:"kind"` // string, bool, int, duration, list, map
	Default     string `json:"default,omitempty"`
	Required    bool   `json:"required,omitempty"`
	Description string `json:"description"`
	Example     string `json:"example,omitempty"`
}

// FieldsOf lists the fields of a config struct pointer from its tags,
// as strictyaml.Spec reads them for every part of config.yaml; a
// connector's fields must each have a description.
func FieldsOf(cfg any) ([]Field, error) {
	t := reflect.TypeOf(cfg)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("config must be a pointer to a struct, got %T", cfg)
	}
	spec, err := strictyaml.Spec(t)
	if err != nil {
		return nil, err
	}
	out := make([]Field, 0, len(spec))
	for _, f := range spec {
		if f.Description == "" {
			return nil, fmt.Errorf("field %s has no desc tag", f.Name)
		}
		out = append(out, Field{Name: f.Name, Kind: strictyaml.Kind(f.Type), Default: f.Default,
			Required: f.Required, Description: f.Description, Example: f.Example})
	}
	return out, nil
}
