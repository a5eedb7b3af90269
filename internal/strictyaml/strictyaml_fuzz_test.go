package strictyaml_test

import (
	"bytes"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/internal/strictyaml"
)

// fuzzInner and fuzzDoc cover every kind of value Decode handles: scalars,
// pointers, structs, slices, maps, text unmarshalers and raw nodes.
type fuzzInner struct {
	A string            `yaml:"a"`
	L []int             `yaml:"l"`
	M map[string]string `yaml:"m"`
}

type fuzzDoc struct {
	Name  string                 `yaml:"name"`
	N     int                    `yaml:"n"`
	F     float64                `yaml:"f"`
	B     *bool                  `yaml:"b"`
	U     uint8                  `yaml:"u"`
	In    fuzzInner              `yaml:"in"`
	Ins   []fuzzInner            `yaml:"ins"`
	P     *fuzzInner             `yaml:"p"`
	Addr  netip.Addr             `yaml:"addr"`
	Deep  map[string][]fuzzInner `yaml:"deep"`
	Keys  map[int]bool           `yaml:"keys"`
	Raw   yaml.Node              `yaml:"raw"`
	Plain string                 // key "plain"
	Skip  string                 `yaml:"-"`
}

// FuzzDecode checks Decode against yaml.v3's own strict decoding (known
// fields only) of the same document into the same type: what Decode
// accepts, yaml.v3 accepts too, with the same value; what it refuses, it
// refuses with errors that each name a key path.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"name: x\nn: 3\nf: 1.5\nb: true\nu: 7\n",
		"in: {a: x, l: [1, 2], m: {k: v}}\nins: [{a: y}, {l: [3]}]\n",
		"p: {a: z}\naddr: 127.0.0.1\nraw: {any: [thing]}\nplain: p\n",
		"deep: {k: [{a: 1}, {m: {x: y}}]}\nkeys: {1: true, 2: false}\n",
		"name: &a x\nin: {a: *a}\n",
		"n: nope\nin: [1]\nins: {a: b}\nnam: x\n",
		"u: 300\naddr: not-an-ip\nkeys: {x: true}\n",
		"name: x\nname: y\n",
		"in: {a: x, a: y}\n",
		"deep: {k: [], k: []}\n",
		"deep: {k: [],&0: []}\n",
		"name: &a 0\nin: {*a}\n",
		"name: &a a\nin: {*a: x, a: y}\n",
		"keys: {~: true, 1: false}\n",
		"in: {l: [1, ~, &0]}\nins: [~, {a: x}]\ndeep: {k: [~]}\n",
		"Skip: x\n-: y\n",
		"- a\n- b\n",
		"~\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var node yaml.Node
		if yaml.Unmarshal(b, &node) != nil {
			return // a syntax error: yaml.v3's, not Decode's
		}
		var strict fuzzDoc
		err := strictyaml.Decode(&node, &strict, "")
		var ref fuzzDoc
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		refErr := dec.Decode(&ref)
		if refErr != nil && refErr.Error() == "EOF" {
			refErr = nil // an empty document
		}
		if err == nil {
			if refErr != nil {
				t.Fatalf("Decode accepted what yaml.v3 refuses (%v):\n%s", refErr, b)
			}
			strict.Raw, ref.Raw = yaml.Node{}, yaml.Node{}
			if !reflect.DeepEqual(strict, ref) {
				t.Fatalf("Decode and yaml.v3 disagree:\n%s\nDecode  %+v\nyaml.v3 %+v", b, strict, ref)
			}
			return
		}
		checkPaths(t, err, rootIsMapping(&node), b)
	})
}

// checkPaths checks that err joins *PathError values only, each naming a
// key path unless it is about the document's root not being a mapping.
func checkPaths(t *testing.T, err error, mapping bool, doc []byte) {
	t.Helper()
	for _, e := range leaves(err) {
		var pe *strictyaml.PathError
		switch {
		case !errors.As(e, &pe):
			t.Fatalf("%v: %T, not a *PathError\n%s", e, e, doc)
		case pe.Path == "" && (mapping || !strings.Contains(pe.Msg, "must be a mapping")):
			t.Fatalf("%q names no key path\n%s", pe.Msg, doc)
		case pe.Msg == "":
			t.Fatalf("path %q: an empty message\n%s", pe.Path, doc)
		}
	}
}

// leaves flattens joined errors.
func leaves(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, leaves(e)...)
	}
	return out
}

func rootIsMapping(n *yaml.Node) bool {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n.Kind == yaml.MappingNode
}

// A key given twice is an error naming it, in a struct and in a map: YAML
// forbids it, and either value kept would silently drop the other.
func TestDuplicateKeysAreErrors(t *testing.T) {
	for doc, want := range map[string]string{
		"name: x\nname: y\n":       "name: duplicate key (first at line 1)",
		"in: {a: x, a: y}\n":       "in.a: duplicate key (first at line 1)",
		"deep: {k: [], k: []}\n":   "deep.k: duplicate key (first at line 1)",
		"keys: {1: true, 1: no}\n": "keys.1: duplicate key (first at line 1)",
	} {
		var node yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &node); err != nil {
			t.Fatal(err)
		}
		var out fuzzDoc
		err := strictyaml.Decode(&node, &out, "")
		if err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %s", doc, err, want)
		}
	}
}

// An empty or null key is named "" in its error, which otherwise would
// name no key path at all.
func TestEmptyKeyIsNamed(t *testing.T) {
	for doc, want := range map[string]string{
		"\"\": x\n":       `"": unknown key`,
		"in: {\"\": x}\n": `in."": unknown key`,
		"? [a]\n: x\n":    `"": unknown key`,
	} {
		var node yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &node); err != nil {
			t.Fatal(err)
		}
		var out fuzzDoc
		err := strictyaml.Decode(&node, &out, "")
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: got %v, want %s…", doc, err, want)
		}
	}
}
