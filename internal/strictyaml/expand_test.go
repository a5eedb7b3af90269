package strictyaml_test

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate/internal/strictyaml"
)

func lookup(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestExpand(t *testing.T) {
	vars := lookup(map[string]string{"HOST": "db", "PORT": "5432", "EMPTY": "", "ON": "true"})
	tests := map[string]struct {
		src, want string
	}{
		"one variable":             {"a: ${HOST}\n", "a: db\n"},
		"several in one value":     {"a: ${HOST}:${PORT}\n", "a: db:5432\n"},
		"set but empty":            {"a: x${EMPTY}y\n", "a: xy\n"},
		"dollar dollar is literal": {"a: $$HOST and $${HOST}\n", "a: $HOST and ${HOST}\n"},
		"lone dollar kept":         {"a: cost $5\n", "a: cost $5\n"},
		"keys are not expanded":    {"${HOST}: 1\n", "${HOST}: 1\n"},
		"inside lists and maps":    {"a:\n  - b: ${PORT}\n", "a:\n    - b: 5432\n"},
		"not a reference":          {"a: ${1X}\n", "a: ${1X}\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var n yaml.Node
			if err := yaml.Unmarshal([]byte(tc.src), &n); err != nil {
				t.Fatal(err)
			}
			if err := strictyaml.Expand(&n, "", vars); err != nil {
				t.Fatal(err)
			}
			out, err := yaml.Marshal(&n)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Errorf("got %q, want %q", out, tc.want)
			}
		})
	}
}

// A plain scalar is typed after expansion (a port is a number, a flag a
// bool); a quoted one stays a string.
func TestExpandRetypesPlainScalars(t *testing.T) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte("port: ${PORT}\non: ${ON}\nquoted: \"${PORT}\"\n"), &n); err != nil {
		t.Fatal(err)
	}
	if err := strictyaml.Expand(&n, "", lookup(map[string]string{"PORT": "8080", "ON": "true"})); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Port   int    `yaml:"port"`
		On     bool   `yaml:"on"`
		Quoted string `yaml:"quoted"`
	}
	if err := strictyaml.Decode(&n, &out, ""); err != nil {
		t.Fatal(err)
	}
	if out.Port != 8080 || !out.On || out.Quoted != "8080" {
		t.Fatalf("got %+v", out)
	}
}

func TestExpandUnsetNamesEveryPath(t *testing.T) {
	var n yaml.Node
	src := "a: ${NOPE}\nlist:\n  - ok\n  - x${GONE}${ALSO}\nm:\n  k: ${NOPE}\n"
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	err := strictyaml.Expand(&n, "root", lookup(nil))
	want := []string{
		"root.a: environment variable NOPE is not set",
		"root.list[1]: environment variable GONE, ALSO is not set",
		"root.m.k: environment variable NOPE is not set",
	}
	if got := messages(err); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %q, want %q", got, want)
	}
}
