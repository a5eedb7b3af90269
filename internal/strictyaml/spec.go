package strictyaml

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/legate-mcp/legate"
)

// Field is one key of a document, read from the tags of the struct field
// it decodes into, so that decoding, defaults, validation and docs share
// one declaration:
//
//	Timeout legate.Duration `yaml:"timeout" default:"30s" min:"0" desc:"Time limit of one call"`
//	Mode    string          `yaml:"mode" enum:"fast,safe" default:"safe" desc:"How calls are made"`
//
// Tags: desc (what the key does, for users), default (YAML text applied
// when the key is unset), required:"true", enum (comma-separated values),
// min (least number allowed), example.
type Field struct {
	Name        string
	Description string
	Default     string
	Required    bool
	Enum        []string
	Min         string
	Example     string
	// Type is the Go type the key decodes into.
	Type reflect.Type
	// Index is the field's index in its struct.
	Index int
}

// Spec lists the keys of struct type t (or a pointer to one) from its
// fields' tags, in declaration order. Every exported field needs a yaml
// name; a field tagged yaml:"-" is not a key.
func Spec(t reflect.Type) ([]Field, error) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("strictyaml: spec of %s: not a struct", t)
	}
	var out []Field
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			return nil, fmt.Errorf("strictyaml: %s.%s has no yaml name", t, sf.Name)
		}
		f := Field{Name: name, Description: sf.Tag.Get("desc"), Default: sf.Tag.Get("default"),
			Required: sf.Tag.Get("required") == "true", Min: sf.Tag.Get("min"), Example: sf.Tag.Get("example"),
			Type: sf.Type, Index: i}
		if e := sf.Tag.Get("enum"); e != "" {
			f.Enum = strings.Split(e, ",")
		}
		out = append(out, f)
	}
	return out, nil
}

// The kinds of value a key holds, as Kind names them.
const (
	KindString   = "string"
	KindBool     = "bool"
	KindInt      = "int"
	KindNumber   = "number"
	KindDuration = "duration"
	KindList     = "list"
	KindMap      = "map"
	KindAny      = "any"
)

var durationType = reflect.TypeFor[legate.Duration]()

// Kind names the kind of value of type t: string, bool, int, number,
// duration, list, map (a mapping, with fixed keys or not) or any (a raw
// YAML node).
func Kind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == nodeType:
		return KindAny
	case t == durationType:
		return KindDuration
	}
	switch t.Kind() {
	case reflect.Bool:
		return KindBool
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Uint32:
		return KindInt
	case reflect.Float64, reflect.Float32:
		return KindNumber
	case reflect.Slice:
		return KindList
	case reflect.Map, reflect.Struct:
		if reflect.PointerTo(t).Implements(textUnmarshal) {
			return KindString
		}
		return KindMap
	}
	return KindString
}

// Struct returns the struct type whose keys a value of type t holds —
// t itself, or the element of a pointer, list or map — and whether
// there is one. Text types (durations) and raw nodes have none.
func Struct(t reflect.Type) (reflect.Type, bool) {
	for {
		switch {
		case t == nodeType, reflect.PointerTo(t).Implements(textUnmarshal), reflect.PointerTo(t).Implements(unmarshalerT):
			return nil, false
		case t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map:
			t = t.Elem()
		case t.Kind() == reflect.Struct:
			return t, true
		default:
			return nil, false
		}
	}
}

// Segment is how a path goes from a key to the keys of its struct:
// "[]" into a list's items, ".*" into a map's values, "" for a mapping.
func Segment(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice:
		return "[]" + Segment(t.Elem())
	case reflect.Map:
		return ".*" + Segment(t.Elem())
	}
	return ""
}

// Walk calls fn for every key of struct type t and, depth first, of the
// structs below it, with its path ("upstreams[].tools.include",
// "connectors[].credentials.*"). leaf stops the descent at a struct
// type described as a whole (nil: none).
func Walk(t reflect.Type, path string, leaf func(reflect.Type) bool, fn func(path string, f Field)) error {
	fields, err := Spec(t)
	if err != nil {
		return err
	}
	for _, f := range fields {
		p := join(path, f.Name)
		fn(p, f)
		st, ok := Struct(f.Type)
		if !ok || leaf != nil && leaf(st) {
			continue
		}
		if err := Walk(st, p+Segment(f.Type), leaf, fn); err != nil {
			return err
		}
	}
	return nil
}
