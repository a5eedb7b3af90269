package connectors

import (
	"fmt"
	"github.com/legate-mcp/legate"
	"reflect"
	"strings"
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

// FieldsOf lists the fields of a config struct pointer from its tags.
func FieldsOf(cfg any) ([]Field, error) {
	t := reflect.TypeOf(cfg)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("config must be a pointer to a struct, got %T", cfg)
	}
	t = t.Elem()
	var out []Field
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			return nil, fmt.Errorf("field %s has no yaml name", sf.Name)
		}
		desc := sf.Tag.Get("desc")
		if desc == "" {
			return nil, fmt.Errorf("field %s has no desc tag", name)
		}
		out = append(out, Field{
			Name:        name,
			Kind:        kindOf(sf.Type),
			Default:     sf.Tag.Get("default"),
			Required:    sf.Tag.Get("required") == "true",
			Description: desc,
			Example:     sf.Tag.Get("example"),
		})
	}
	return out, nil
}

var durationType = reflect.TypeFor[legate.Duration]()

func kindOf(t reflect.Type) string {
	if t == durationType {
		return "duration"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Uint32:
		return "int"
	case reflect.Float64, reflect.Float32:
		return "number"
	case reflect.Slice:
		return "list"
	case reflect.Map, reflect.Struct:
		return "map"
	}
	return "string"
}
