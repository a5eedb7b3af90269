package config_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/legate-mcp/legate/config"
)

var update = flag.Bool("update", false, "rewrite the golden files (testdata/*.golden, schema.json, docs/configuration.md's key table)")

// golden compares got with the file at path, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./config -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the spec gives (go test ./config -update rewrites it):\n%s", path, got)
	}
}

// Each testdata/effective/NAME.yaml, and config.yaml.example, gives the
// effective configuration in testdata/effective/NAME.golden: the file
// decoded, with every default applied.
func TestEffectiveConfig(t *testing.T) {
	inputs, err := filepath.Glob("testdata/effective/*.yaml")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs: %v", err)
	}
	vars := env(map[string]string{"PORT": "9090", "HOOK_URL": "https://hooks.example.com/in"})
	inputs = append(inputs, "../config.yaml.example")
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".yaml")
		if strings.HasSuffix(in, ".example") {
			name = "example"
		}
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			f, err := config.Parse(b, vars)
			if err != nil {
				t.Fatal(err)
			}
			out, err := f.JSON()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "effective", name+".golden"), append(out, '\n'))
		})
	}
}

func TestSchemaFile(t *testing.T) {
	b, err := json.MarshalIndent(config.Schema(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "schema.json", append(b, '\n'))
}

// docs/configuration.md's table of keys is the spec's, between its two markers.
func TestConfigurationKeyTable(t *testing.T) {
	const path = "../docs/configuration.md"
	const begin, end = "<!-- config keys: go test ./config -update -->\n", "<!-- end of config keys -->\n"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no key table between %q and %q", path, begin, end)
	}
	want := doc[:i+len(begin)] + config.KeyTable() + doc[j:]
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if doc != want {
		t.Errorf("%s's key table differs from the spec (go test ./config -update rewrites it)", path)
	}
}
