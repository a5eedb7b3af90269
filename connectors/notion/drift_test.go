package notion_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/legate-mcp/legate/connectors/connectortest"
)

// The stand-in answers as Notion's published description says: every
// answer it gives on an endpoint the connector uses validates against
// the response schema of testdata/notion-openapi-responses.json (see
// testdata/README.md), strengthened by the endpoint's published example.

// openAPI is the trimmed description: per path and method, the schema
// and examples of each status's answer.
type openAPI struct {
	Paths map[string]map[string]struct {
		Responses map[string]struct {
			Schema   map[string]any `json:"schema"`
			Examples map[string]struct {
				Value any `json:"value"`
			} `json:"examples"`
		} `json:"responses"`
	} `json:"paths"`
}

// jsonSchema converts an OpenAPI 3.1 schema to one jsonschema-go takes:
// it drops example (an OpenAPI keyword, not JSON Schema's) and reads a
// property {} as any value.
func jsonSchema(s any) any {
	switch v := s.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if k != "example" {
				out[k] = jsonSchema(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = jsonSchema(e)
		}
		return out
	}
	return s
}

// fromExample is the schema an example implies: each value's JSON type,
// recursively (a null is any value, an array's items are its first's);
// at depth 0, and in the objects of a top-level results list, every key
// of the example is required. Deeper keys are optional: the examples
// show one variant (a bot owned by a user, not by the workspace).
func fromExample(v any, depth int) map[string]any {
	switch e := v.(type) {
	case map[string]any:
		props, required := map[string]any{}, []any{}
		for k, sub := range e {
			d := depth + 1
			if depth == 0 && k == "results" {
				d = -1 // a results list's items are required as the top
			}
			props[k] = fromExample(sub, d)
			if depth <= 0 {
				required = append(required, k)
			}
		}
		return map[string]any{"type": "object", "properties": props, "required": required}
	case []any:
		if len(e) == 0 {
			return map[string]any{"type": "array"}
		}
		return map[string]any{"type": "array", "items": fromExample(e[0], depth)}
	case string:
		return map[string]any{"type": "string"}
	case float64:
		return map[string]any{"type": "number"}
	case bool:
		return map[string]any{"type": "boolean"}
	}
	return map[string]any{}
}

// specPath is the description's path for a stand-in route
// ("GET /v1/pages/{id}"), matching literal segments and parameters.
func specPath(spec *openAPI, route string) (method, path string) {
	method, p, _ := strings.Cut(route, " ")
	segs := strings.Split(p, "/")
	for sp := range spec.Paths {
		ss := strings.Split(sp, "/")
		if len(ss) != len(segs) {
			continue
		}
		match := true
		for i := range ss {
			param := strings.HasPrefix(ss[i], "{") && strings.HasPrefix(segs[i], "{")
			if ss[i] != segs[i] && !param {
				match = false
			}
		}
		if match {
			return strings.ToLower(method), sp
		}
	}
	return "", ""
}

// validators are the schemas of the description, by "method path status";
// the error answer's properties are all required.
func validators(t *testing.T, spec *openAPI) map[string]*jsonschema.Resolved {
	out := map[string]*jsonschema.Resolved{}
	for path, methods := range spec.Paths {
		for method, op := range methods {
			for status, r := range op.Responses {
				all := []any{}
				if r.Schema != nil {
					all = append(all, jsonSchema(r.Schema))
					if props, ok := r.Schema["properties"].(map[string]any); ok && status != "200" && len(props) > 0 {
						req := []any{}
						for k := range props {
							req = append(req, k)
						}
						all = append(all, map[string]any{"required": req})
					}
				}
				for _, ex := range r.Examples {
					if status == "200" {
						all = append(all, fromExample(ex.Value, 0))
					}
				}
				raw, _ := json.Marshal(map[string]any{"allOf": all})
				var s jsonschema.Schema
				if err := json.Unmarshal(raw, &s); err != nil {
					t.Fatalf("%s %s %s: %v", method, path, status, err)
				}
				res, err := s.Resolve(nil)
				if err != nil {
					t.Fatalf("%s %s %s: %v", method, path, status, err)
				}
				out[method+" "+path+" "+status] = res
			}
		}
	}
	return out
}

func TestStandinAnswersAsNotionDescribes(t *testing.T) {
	raw, err := os.ReadFile("testdata/notion-openapi-responses.json")
	if err != nil {
		t.Fatal(err)
	}
	var spec openAPI
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	schemas := validators(t, &spec)
	var mu sync.Mutex
	seen := map[string]bool{}
	connTest := task{ask: "test the connection", run: func(t *testing.T, e *env) {
		if err := e.in.c.Test(context.Background(), connectortest.Creds{"token": token}); err != nil {
			t.Fatal(err)
		}
	}}
	for _, tk := range append(slices.Clip(tasks), connTest) {
		t.Run(tk.ask, func(t *testing.T) {
			e := newEnv(t)
			e.s.record = func(route string, status int, body []byte) {
				method, path := specPath(&spec, route)
				if path == "" {
					t.Errorf("%s: no such path in the description", route)
					return
				}
				key := method + " " + path + " " + map[bool]string{true: "200", false: "400"}[status == 200]
				mu.Lock()
				seen[method+" "+path] = true
				mu.Unlock()
				v, ok := schemas[key]
				if !ok || len(body) == 0 {
					return // no schema for the status, or a lost answer
				}
				var doc any
				if err := json.Unmarshal(body, &doc); err != nil {
					t.Errorf("%s %d: not JSON: %v", route, status, err)
					return
				}
				if err := v.Validate(doc); err != nil {
					t.Errorf("%s %d: the answer is not as Notion describes it: %v\n%s", route, status, err, body)
				}
			}
			tk.run(t, e)
		})
	}
	for path, methods := range spec.Paths {
		for method := range methods {
			if !seen[method+" "+path] {
				t.Errorf("%s %s: no answer checked", method, path)
			}
		}
	}
}
