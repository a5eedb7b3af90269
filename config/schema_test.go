package config_test

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/legate-mcp/legate/config"
)

func resolvedSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	rs, err := config.Schema().Resolve(nil)
	if err != nil {
		t.Fatalf("the schema does not resolve: %v", err)
	}
	return rs
}

func TestSchemaValidatesTheExample(t *testing.T) {
	b, err := os.ReadFile("../config.yaml.example")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := config.YAMLToJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := resolvedSchema(t).Validate(doc); err != nil {
		t.Fatalf("config.yaml.example: %v", err)
	}
	if !strings.HasPrefix(string(b), "# yaml-language-server: $schema=config/schema.json\n") {
		t.Error("config.yaml.example does not name its schema for editors on its first line")
	}
}

func TestSchemaRefuses(t *testing.T) {
	rs := resolvedSchema(t)
	tests := map[string]string{
		"unknown key":            "listen_addr: x\n",
		"unknown nested key":     "http: {read_timeot: 1s}\n",
		"bad enum":               "tool_names: fancy\n",
		"bad duration":           "call_timeout: soon\n",
		"negative number":        "max_result_bytes: -1\n",
		"missing required":       "upstreams:\n  - {url: http://x/}\n",
		"reference of two kinds": "connectors:\n  - {type: http, credentials: {token: {env: A, file: B}}}\n",
		"unknown class":          "policy: {defaults: {sometimes: allow}}\n",
		"unknown action":         "policy: {defaults: {read: maybe}}\n",
		"wrong kind":             "allowed_hosts: {a: b}\n",
		"words for a number":     "max_result_bytes: lots\n",
		"words for a boolean":    "auth: {allow_unauthenticated: sure}\n",
		"unknown connector type": "connectors:\n  - {type: nosuch}\n",
		"unknown key of a type":  "connectors:\n  - {type: http, config: {base_url: http://x/, base_ur: y}}\n",
		"required key of a type": "connectors:\n  - {type: http, config: {timeout: 1s}}\n",
		"credential of a type":   "connectors:\n  - {type: http, config: {base_url: http://x/}, credentials: {secret: {env: A}}}\n",
	}
	for name, doc := range tests {
		t.Run(name, func(t *testing.T) {
			v, err := config.YAMLToJSON([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			if err := rs.Validate(v); err == nil {
				t.Fatal("the schema accepts it")
			}
		})
	}
	v, _ := config.YAMLToJSON([]byte("call_timeout: 1m30s\nsession_idle_timeout: ${IDLE}\nmax_result_bytes: ${MAX}\nhttp: {max_body_bytes: 1024}\nupstreams:\n  - {id: a, protocol_version: 2025-06-18, command: [x]}\n"))
	if err := rs.Validate(v); err != nil {
		t.Fatalf("a valid document is refused: %v", err)
	}
}

// config.yaml.example shows every key of the spec, and no other.
func TestExampleShowsEveryKey(t *testing.T) {
	b, err := os.ReadFile("../config.yaml.example")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := config.YAMLToJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	var spec []string
	for _, k := range config.Spec() {
		spec = append(spec, k.Path)
	}
	shown := map[string]bool{}
	examplePaths(doc, "", spec, shown)
	for _, p := range spec {
		if !shown[p] {
			t.Errorf("config.yaml.example does not show %s", p)
		}
	}
	for p := range shown {
		if !slices.Contains(spec, p) {
			t.Errorf("config.yaml.example shows %s, which the spec lacks", p)
		}
	}
}

// examplePaths records the spec paths of the keys of v, a value at path:
// list items are at path[], the values of a map with free keys at path.*.
func examplePaths(v any, path string, spec []string, shown map[string]bool) {
	switch v := v.(type) {
	case []any:
		for _, item := range v {
			examplePaths(item, path+"[]", spec, shown)
		}
	case map[string]any:
		for key, val := range v {
			p := key
			if path != "" {
				p = path + "." + key
			}
			if !slices.Contains(spec, p) && slices.Contains(spec, path+".*") {
				p = path + ".*"
			}
			shown[p] = true
			if hasKeysBelow(p, spec) {
				examplePaths(val, p, spec, shown)
			}
		}
	}
}

func hasKeysBelow(p string, spec []string) bool {
	return slices.ContainsFunc(spec, func(s string) bool {
		return strings.HasPrefix(s, p+".") || strings.HasPrefix(s, p+"[")
	})
}

// An example is shown as the value it is: a list as a list, a mapping as
// an object, a duration as its text.
func TestSchemaExamplesAreValues(t *testing.T) {
	s := config.Schema()
	hosts := s.Properties["allowed_hosts"].Examples
	if len(hosts) != 1 || !reflect.DeepEqual(hosts[0], []any{"legate.example.com"}) {
		t.Errorf("allowed_hosts example: %#v", hosts)
	}
	headers := s.Properties["upstreams"].Items.Properties["header_env"].Examples
	if len(headers) != 1 || !reflect.DeepEqual(headers[0], map[string]any{"Authorization": "GITHUB_MCP_TOKEN"}) {
		t.Errorf("header_env example: %#v", headers)
	}
	if ex := s.Properties["listen"].Examples; len(ex) != 1 || ex[0] != "127.0.0.1:8080" {
		t.Errorf("listen example: %#v", ex)
	}
}
