// Package connectortest is the contract suite every connector's tests run:
//
//	func TestContract(t *testing.T) {
//		connectortest.Run(t, connectortest.Case{
//			Type:   "webhook",
//			Config: "url: http://127.0.0.1:9/in\nallow_private_networks: true",
//		})
//	}
//
// It checks what the gateway relies on: the type is registered with a
// described config, a valid sample builds and validates, an empty config
// reports every required field at once, tools are well formed, and bad
// arguments give INVALID_ARGUMENT instead of a panic or a provider call.
package connectortest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

// Case is one connector type under test.
type Case struct {
	// Type is the registered type name.
	Type string
	// Config is a valid config section in YAML.
	Config string
	// Credentials are given to tool calls; nil gives none.
	Credentials map[string]string
}

// Creds is a Credentials backed by a map, for tests.
type Creds map[string]string

// Get returns the value or an error wrapping ErrNoCredential.
func (c Creds) Get(_ context.Context, name string) (string, error) {
	v, ok := c[name]
	if !ok {
		return "", fmt.Errorf("%s: %w", name, connectors.ErrNoCredential)
	}
	return v, nil
}

// Has reports whether the credential is set.
func (c Creds) Has(name string) bool { _, ok := c[name]; return ok }

// Build decodes config (YAML) for the type and builds the instance, failing
// the test on any error.
func Build(t testing.TB, typ, id, config string) connectors.Connector {
	t.Helper()
	ct, ok := connectors.Lookup(typ)
	if !ok {
		t.Fatalf("connector type %q is not registered (is it imported in connectors/all?)", typ)
	}
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(config), &node); err != nil {
		t.Fatalf("sample config: %v", err)
	}
	c, err := connectors.Build(ct, id, &node, "config")
	if err != nil {
		t.Fatalf("building %s from sample config: %v", typ, err)
	}
	return c
}

// Samples builds every registered connector type from its sample.yaml,
// in dir/<type>/ (dir: the connectors folder, as the test's package sees
// it), hands each instance to f and closes it.
func Samples(t testing.TB, dir string, f func(ct connectors.Type, c connectors.Connector)) {
	t.Helper()
	for _, ct := range connectors.Types() {
		sample, err := os.ReadFile(filepath.Join(dir, ct.Name, "sample.yaml"))
		if err != nil {
			t.Fatalf("connector type %s: %v (each type keeps a sample.yaml beside its code)", ct.Name, err)
		}
		var node yaml.Node
		if err := yaml.Unmarshal(sample, &node); err != nil {
			t.Fatalf("%s/sample.yaml: %v", ct.Name, err)
		}
		c, err := connectors.Build(ct, ct.Name, &node, ct.Name+"/sample.yaml")
		if err != nil {
			t.Fatalf("building %s from its sample.yaml: %v", ct.Name, err)
		}
		f(ct, c)
		if cl, ok := c.(connectors.Closer); ok {
			cl.Close()
		}
	}
}

// Run runs the contract suite on one connector type.
func Run(t *testing.T, tc Case) {
	t.Helper()
	ct, ok := connectors.Lookup(tc.Type)
	if !ok {
		t.Fatalf("connector type %q is not registered", tc.Type)
	}

	t.Run("spec", func(t *testing.T) {
		if strings.TrimSpace(ct.Description) == "" {
			t.Error("type has no description")
		}
		if ct.Config != nil {
			if _, err := connectors.FieldsOf(ct.Config()); err != nil {
				t.Error(err)
			}
		}
		seen := map[string]bool{}
		for _, c := range ct.Credentials {
			if c.Name == "" || c.Description == "" || seen[c.Name] {
				t.Errorf("credential %q: needs a unique name and a description", c.Name)
			}
			seen[c.Name] = true
		}
	})

	t.Run("sample builds and validates", func(t *testing.T) {
		Build(t, tc.Type, tc.Type, tc.Config)
	})

	t.Run("empty config reports every required field", func(t *testing.T) {
		if ct.Config == nil {
			return
		}
		fields, _ := connectors.FieldsOf(ct.Config())
		var required []string
		for _, f := range fields {
			if f.Required {
				required = append(required, f.Name)
			}
		}
		_, err := connectors.Build(ct, tc.Type, nil, "c")
		if len(required) == 0 {
			return
		}
		if err == nil {
			t.Fatalf("empty config accepted, but %v are required", required)
		}
		for _, name := range required {
			if !strings.Contains(err.Error(), "c.config."+name) {
				t.Errorf("error does not name required field %q: %v", name, err)
			}
		}
	})

	t.Run("unknown config key is refused by path", func(t *testing.T) {
		var node yaml.Node
		if err := yaml.Unmarshal([]byte(tc.Config+"\nno_such_key_xyz: 1\n"), &node); err != nil {
			t.Fatal(err)
		}
		_, err := connectors.Build(ct, tc.Type, &node, "c")
		if err == nil || !strings.Contains(err.Error(), "c.config.no_such_key_xyz") {
			t.Fatalf("unknown key not reported by path: %v", err)
		}
	})

	t.Run("tools", func(t *testing.T) {
		c := Build(t, tc.Type, tc.Type, tc.Config)
		tools := c.Tools()
		if len(tools) == 0 {
			t.Fatal("instance lists no tools")
		}
		if err := connectors.CheckTools(tools); err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools {
			if cl := tool.ClassOf(json.RawMessage(`not json`)); !cl.Valid() || cl.Rank() < tool.Class.Rank() {
				t.Errorf("tool %s: class for unparsable arguments is %q, below its declared %q", tool.Name, cl, tool.Class)
			}
		}
	})

	t.Run("bad arguments are INVALID_ARGUMENT", func(t *testing.T) {
		c := Build(t, tc.Type, tc.Type, tc.Config)
		for _, tool := range c.Tools() {
			for _, args := range []string{`{"no_such_argument_xyz": 1}`, `[1,2]`, `{`} {
				res, err := tool.Run(context.Background(), &connectors.Call{
					Tool: tool.Name, Args: json.RawMessage(args),
					Credentials: Creds(tc.Credentials), OperationID: "contract-test",
				})
				var ce *legate.Error
				if !errors.As(err, &ce) || ce.Code != legate.CodeInvalidArgument {
					t.Errorf("tool %s with %s: got result %v, error %v; want INVALID_ARGUMENT", tool.Name, args, res, err)
				}
			}
		}
	})
}
