package strictyaml_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/internal/strictyaml"
)

type item struct {
	Name  string            `yaml:"name"`
	Port  int               `yaml:"port"`
	Tags  []string          `yaml:"tags"`
	Extra map[string]string `yaml:"extra"`
}

type doc struct {
	Listen  string              `yaml:"listen"`
	Timeout legate.Duration     `yaml:"timeout"`
	Enabled *bool               `yaml:"enabled"`
	Items   []item              `yaml:"items"`
	ByName  map[string]item     `yaml:"by_name"`
	Grid    [][]int             `yaml:"grid"`
	Raw     yaml.Node           `yaml:"raw"`
	Nested  struct{ Deep item } `yaml:"nested"`
	Ignored string              `yaml:"-"`
	Addr    netip.Addr          `yaml:"addr"`
}

func decode(t *testing.T, src string) (*doc, error) {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatalf("invalid test YAML: %v", err)
	}
	var d doc
	return &d, strictyaml.Decode(&n, &d, "")
}

// messages lists the text of each joined error.
func messages(err error) []string {
	var out []string
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, messages(e)...)
		}
		return out
	}
	if err != nil {
		out = append(out, err.Error())
	}
	return out
}

func TestDecodeErrors(t *testing.T) {
	tests := map[string]struct {
		src  string
		want []string
	}{
		"unknown key suggests the near one": {"listn: x\n", []string{`listn: unknown key (did you mean "listen"?)`}},
		"unknown key far from any":          {"colour: red\n", []string{"colour: unknown key"}},
		"suggestion in a list item":         {"items: [{nme: a}]\n", []string{`items[0].nme: unknown key (did you mean "name"?)`}},
		"ignored field is unknown":          {"ignored: x\n", []string{"ignored: unknown key"}},
		"duplicate key":                     {"listen: a\nlisten: b\n", []string{"listen: duplicate key (first at line 1)"}},
		"duplicate key in a list item":      {"items:\n  - name: a\n    name: b\n", []string{"items[0].name: duplicate key (first at line 2)"}},
		"duplicate map key":                 {"by_name:\n  a: {}\n  a: {}\n", []string{"by_name.a: duplicate key (first at line 2)"}},
		"null map key":                      {"by_name:\n  ~: {}\n  &x : {}\n", []string{`by_name."": a key must not be null (quote it: "")`, `by_name."": a key must not be null (quote it: "")`}},
		"null list item":                    {"grid: [[1, ~], [&x ]]\nitems:\n  -\n  - name: a\n", []string{"grid[0][1]: a list item must not be empty or null", "grid[1][0]: a list item", "items[0]: a list item"}},
		"path in a list of mappings":        {"items:\n  - name: a\n  - port: http\n", []string{`items[1].port: cannot use "http" as int`}},
		"path in a map of structs":          {"by_name:\n  web: {tags: x}\n", []string{"by_name.web.tags: must be a list"}},
		"path in a list of lists":           {"grid: [[1, 2], [3, x]]\n", []string{`grid[1][1]: cannot use "x" as int`}},
		"path in a nested map value":        {"items: [{extra: {a: [1]}}]\n", []string{"items[0].extra.a: cannot use"}},
		"path in a nested struct":           {"nested: {deep: {port: -x}}\n", []string{`nested.deep.port: cannot use "-x" as int`}},
		"struct given a scalar":             {"nested: 3\n", []string{"nested: must be a mapping"}},
		"list given a mapping":              {"items: {a: 1}\n", []string{"items: must be a list"}},
		"text unmarshaler message":          {"timeout: soon\n", []string{`timeout: invalid duration "soon"`}},
		"text unmarshaler given a mapping":  {"timeout: {a: 1}\naddr: {0}\n", []string{"timeout: must be a single value, not a mapping", "addr: must be a single value, not a mapping"}},
		"text unmarshaler given a list":     {"addr: [127.0.0.1]\n", []string{"addr: must be a single value, not a list"}},
		"every error reported": {"listn: x\ntimeout: soon\nitems: [{port: x}]\n",
			[]string{"listn: unknown key", "timeout: invalid duration", "items[0].port: cannot use"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := decode(t, tc.src)
			got := messages(err)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d errors %q, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("error %d is %q, want it to start with %q", i, got[i], w)
				}
				var pe *strictyaml.PathError
				if !errors.As(err, &pe) {
					t.Errorf("%v is not a *PathError", err)
				}
			}
		})
	}
}

func TestDecodeValues(t *testing.T) {
	d, err := decode(t, `
listen: 127.0.0.1:1
timeout: 1m30s
enabled: false
items:
  - {name: a, port: 80, tags: [x, y], extra: {k: v}}
by_name: {web: {name: w}}
grid: [[1], [2, 3]]
raw: {anything: [goes, here]}
nested: {deep: {name: d}}
`)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case d.Listen != "127.0.0.1:1", time.Duration(d.Timeout) != 90*time.Second:
		t.Errorf("scalars: %+v", d)
	case d.Enabled == nil || *d.Enabled:
		t.Errorf("enabled: %v", d.Enabled)
	case len(d.Items) != 1 || d.Items[0].Port != 80 || d.Items[0].Tags[1] != "y" || d.Items[0].Extra["k"] != "v":
		t.Errorf("items: %+v", d.Items)
	case d.ByName["web"].Name != "w", len(d.Grid) != 2 || d.Grid[1][1] != 3, d.Nested.Deep.Name != "d":
		t.Errorf("nested: %+v", d)
	case d.Raw.Kind != yaml.MappingNode || d.Raw.Content[0].Value != "anything":
		t.Errorf("raw node not kept: %+v", d.Raw)
	}
}

func TestDecodeNullLeavesZero(t *testing.T) {
	d, err := decode(t, "listen: ~\nitems:\nenabled: null\n")
	if err != nil || d.Listen != "" || d.Items != nil || d.Enabled != nil {
		t.Fatalf("got %+v, %v", d, err)
	}
}

func TestDecodeWantsAPointer(t *testing.T) {
	var n yaml.Node
	if err := strictyaml.Decode(&n, doc{}, ""); err == nil {
		t.Fatal("a non-pointer was accepted")
	}
}

func TestDecodePathPrefix(t *testing.T) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte("bogus: 1\n"), &n); err != nil {
		t.Fatal(err)
	}
	var d doc
	err := strictyaml.Decode(&n, &d, "connectors[2].config")
	if err == nil || err.Error() != "connectors[2].config.bogus: unknown key" {
		t.Fatalf("got %v", err)
	}
}

func joinAll(errs []error) error { return errors.Join(errs...) }
