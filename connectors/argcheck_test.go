package connectors_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	_ "github.com/legate-mcp/legate/connectors/all"
	"github.com/legate-mcp/legate/connectors/connectortest"
)

// registeredSchemas are the input schemas of every tool of every
// registered connector type, as each type's sample.yaml builds it.
func registeredSchemas(t *testing.T) map[string]*jsonschema.Schema {
	out := map[string]*jsonschema.Schema{}
	connectortest.Samples(t, ".", func(ct connectors.Type, c connectors.Connector) {
		for _, tool := range c.Tools() {
			var s jsonschema.Schema
			if err := json.Unmarshal(tool.InputSchema, &s); err != nil {
				t.Fatalf("%s.%s: %v", ct.Name, tool.Name, err)
			}
			out[ct.Name+"."+tool.Name] = &s
		}
	})
	return out
}

// TestQuickCheckIsTheValidators: for every registered tool whose schema
// compiles, the quick check accepts exactly what the general validator
// accepts, over values drawn from the schema (most valid, some with a
// property missing, of another type, or unknown); and most tools' schemas
// compile.
func TestQuickCheckIsTheValidators(t *testing.T) {
	schemas := registeredSchemas(t)
	r := rand.New(rand.NewPCG(1, 2))
	compiled, accepted, refused := 0, 0, 0
	for name, s := range schemas {
		quick := connectors.CompileQuick(s)
		if quick == nil {
			t.Logf("%s: left to the general validator", name)
			continue
		}
		compiled++
		resolved, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for range 300 {
			v := draw(r, s, 0)
			// As a call's arguments arrive: encoded, then decoded into an any.
			b, _ := json.Marshal(v)
			var got any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			valid := resolved.Validate(got) == nil
			if quick(got) != valid {
				t.Fatalf("%s: %s: the quick check says %v, the validator %v", name, b, !valid, valid)
			}
			if valid {
				accepted++
			} else {
				refused++
			}
		}
	}
	t.Logf("%d of %d tools' schemas compiled; %d values valid, %d not", compiled, len(schemas), accepted, refused)
	if compiled < len(schemas)*9/10 || accepted < refused/2 || refused < accepted/10 {
		t.Errorf("%d of %d schemas compiled, %d values valid and %d not: the test draws too few of either", compiled, len(schemas), accepted, refused)
	}
}

// draw is a value for s: mostly of its type and shape, sometimes not.
func draw(r *rand.Rand, s *jsonschema.Schema, depth int) any {
	if r.IntN(12) == 0 || s == nil {
		return []any{nil, true, "x", 3.0, 2.5, -1.0, map[string]any{}, []any{}, []any{"a", 1.0}}[r.IntN(9)]
	}
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	t := "string"
	if len(types) > 0 {
		t = types[r.IntN(len(types))]
	}
	switch t {
	case "null":
		return nil
	case "boolean":
		return r.IntN(2) == 0
	case "integer":
		return float64(r.IntN(200) - 20)
	case "number":
		return r.Float64() * 100
	case "array":
		out := []any{}
		for range r.IntN(3) {
			out = append(out, draw(r, s.Items, depth+1))
		}
		return out
	case "object":
		out := map[string]any{}
		if depth > 3 {
			return out
		}
		for name, p := range s.Properties {
			if r.IntN(10) < 8 || r.IntN(20) == 0 && isRequired(s, name) {
				out[name] = draw(r, p, depth+1)
			}
		}
		for _, name := range s.Required {
			if _, ok := out[name]; !ok && r.IntN(8) != 0 {
				out[name] = draw(r, s.Properties[name], depth+1)
			}
		}
		if r.IntN(15) == 0 {
			out["unknown_key"] = "x"
		}
		return out
	}
	return "text"
}

func isRequired(s *jsonschema.Schema, name string) bool {
	for _, n := range s.Required {
		if n == name {
			return true
		}
	}
	return false
}

// BenchmarkArgs checks and decodes a typical read's arguments through
// the quick check (NewTool) and through the general validator alone.
func BenchmarkArgs(b *testing.B) {
	type in struct {
		Issue  string `json:"issue,omitempty"`
		Repo   string `json:"repo,omitempty"`
		Number int    `json:"number,omitempty"`
	}
	args := json.RawMessage(`{"repo":"acme/storefront","number":212}`)
	schema, _ := jsonschema.For[in](nil)
	resolved, _ := schema.Resolve(nil)
	b.Run("quick", func(b *testing.B) {
		tool := connectors.NewTool("get", "", "read", func(context.Context, *connectors.Call, *in) (*legate.Result, error) { return nil, nil })
		call := &connectors.Call{Args: args}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tool.Run(b.Context(), call); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("general", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := connectors.DecodeArgs[in](args, resolved); err != nil {
				b.Fatal(err)
			}
		}
	})
}
