// Package strictyaml decodes YAML into Go structs strictly: an unknown
// key, a key given twice or a value of the wrong type is an error naming
// its key path (`connectors[1].config.base_url`), and every error is
// reported, not just the first. The structs' tags are their spec (Spec,
// Walk): ApplyDefaults sets unset keys from it and Check validates values
// against it, for config.yaml and every connector's config alike. Expand
// replaces `${NAME}` in values before decoding.
package strictyaml

import (
	"encoding"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// PathError is a decoding error at a key path.
type PathError struct {
	Path string
	Msg  string
}

func (e *PathError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Decode decodes node into out, a non-nil pointer, with path as the key
// path of node. The returned error joins one *PathError per problem.
func Decode(node *yaml.Node, out any, path string) error {
	v := reflect.ValueOf(out)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("strictyaml: out must be a non-nil pointer, got %T", out)
	}
	var errs []error
	decode(node, v.Elem(), path, &errs)
	return errors.Join(errs...)
}

var (
	nodeType      = reflect.TypeFor[yaml.Node]()
	unmarshalerT  = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshal = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func decode(n *yaml.Node, v reflect.Value, path string, errs *[]error) {
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return
		}
		n = n.Content[0]
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == 0 || n.Tag == "!!null" {
		return // absent or null: leave the zero value
	}
	t := v.Type()
	if t == nodeType {
		v.Set(reflect.ValueOf(*n))
		return
	}
	pt := reflect.PointerTo(t)
	if pt.Implements(unmarshalerT) {
		leaf(n, v, path, errs)
		return
	}
	if pt.Implements(textUnmarshal) {
		// Text is a scalar: yaml.v3 would decode a mapping into the type's
		// exported fields (none, for a netip.Addr) and keep its zero value.
		if n.Kind != yaml.ScalarNode {
			*errs = append(*errs, &PathError{path, "must be a single value, not a " + kindName(n.Kind)})
			return
		}
		leaf(n, v, path, errs)
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		decode(n, v.Elem(), path, errs)
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			*errs = append(*errs, &PathError{path, "must be a mapping"})
			return
		}
		checkUnique(n, path, errs)
		fields := structFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := resolve(n.Content[i]).Value, n.Content[i+1]
			idx, ok := fields[key]
			if !ok {
				*errs = append(*errs, &PathError{join(path, key), "unknown key" + suggest(key, fields)})
				continue
			}
			decode(val, v.Field(idx), join(path, key), errs)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			*errs = append(*errs, &PathError{path, "must be a list"})
			return
		}
		s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, item := range n.Content {
			at := fmt.Sprintf("%s[%d]", path, i)
			if isNull(item) && !nullable(t.Elem()) {
				// yaml.v3 would drop the item without a word, moving
				// every later one up a place.
				*errs = append(*errs, &PathError{at, "a list item must not be empty or null"})
				continue
			}
			decode(item, s.Index(i), at, errs)
		}
		v.Set(s)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			*errs = append(*errs, &PathError{path, "must be a mapping"})
			return
		}
		checkUnique(n, path, errs)
		if v.IsNil() {
			v.Set(reflect.MakeMap(t))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if isNull(n.Content[i]) {
				// yaml.v3 would drop the entry without a word.
				*errs = append(*errs, &PathError{join(path, ""), "a key must not be null (quote it: \"\")"})
				continue
			}
			k := reflect.New(t.Key()).Elem()
			if err := n.Content[i].Decode(k.Addr().Interface()); err != nil {
				*errs = append(*errs, &PathError{join(path, resolve(n.Content[i]).Value), "invalid key"})
				continue
			}
			e := reflect.New(t.Elem()).Elem()
			decode(n.Content[i+1], e, join(path, resolve(n.Content[i]).Value), errs)
			v.SetMapIndex(k, e)
		}
	default:
		leaf(n, v, path, errs)
	}
}

// kindName names a node's kind as the errors do.
func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

// isNull reports whether n, or the node it aliases, is null: `~`, `null`
// or nothing at all (a key written as `: v` or carrying only an anchor).
func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// nullable reports whether a null can stand for a value of type t: a nil
// pointer, map, slice or interface, or a raw node.
func nullable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return true
	}
	return t == nodeType
}

// resolve is the node an alias (`*a`) stands for, or n itself: a key given
// by an alias is the anchored value, not the anchor's name.
func resolve(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// checkUnique reports each key a mapping repeats: YAML forbids it, and
// keeping either value would silently drop the other (keys compare as
// yaml.v3 compares them, by kind and text).
func checkUnique(n *yaml.Node, path string, errs *[]error) {
	type key struct {
		kind  yaml.Kind
		value string
	}
	first := map[key]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if line, dup := first[key{k.Kind, k.Value}]; dup {
			*errs = append(*errs, &PathError{join(path, k.Value), fmt.Sprintf("duplicate key (first at line %d)", line)})
			continue
		}
		first[key{k.Kind, k.Value}] = k.Line
	}
}

func leaf(n *yaml.Node, v reflect.Value, path string, errs *[]error) {
	if err := n.Decode(v.Addr().Interface()); err != nil {
		*errs = append(*errs, &PathError{path, cleanErr(err, n, v.Type())})
	}
}

// cleanErr turns yaml's "line 3: cannot unmarshal !!str `x` into int" into
// a message that names the expected kind.
func cleanErr(err error, n *yaml.Node, t reflect.Type) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		want := t.Kind().String()
		if t.Kind() == reflect.Map || t.Kind() == reflect.Struct {
			want = "mapping"
		}
		return fmt.Sprintf("cannot use %q as %s", n.Value, want)
	}
	msg := err.Error()
	if i := strings.Index(msg, ": "); strings.HasPrefix(msg, "yaml: line") && i > 0 {
		msg = msg[i+2:]
	}
	return msg
}

func structFields(t reflect.Type) map[string]int {
	m := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		m[name] = i
	}
	return m
}

// join appends key to path; an empty (or null, or non-scalar) key is
// shown as "" so that its error still names where it is.
func join(path, key string) string {
	if key == "" {
		key = `""`
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// suggest names a known key one edit away, for typos such as `base_ur`.
func suggest(key string, fields map[string]int) string {
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if oneEditApart(k, key) {
			return fmt.Sprintf(" (did you mean %q?)", k)
		}
	}
	return ""
}

func oneEditApart(a, b string) bool {
	if a == b {
		return false
	}
	if len(a) < len(b) {
		a, b = b, a
	}
	if len(a)-len(b) > 1 {
		return false
	}
	diff := 0
	for i, j := 0, 0; i < len(a); i++ {
		if j < len(b) && a[i] == b[j] {
			j++
			continue
		}
		diff++
		if len(a) == len(b) {
			j++
		}
		if diff > 1 {
			return false
		}
	}
	return true
}
