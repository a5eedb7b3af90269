package connectors

import (
	"encoding/json"
	"math"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// A tool's arguments are checked against its input schema at every call.
// The schemas NewTool derives from Go types use few keywords (type,
// properties, required, additionalProperties: false, items) and the
// general validator walks them by reflection, allocating as it goes (a
// few microseconds for three string arguments). quickCheck is such a
// schema compiled once into a direct check of the decoded arguments.

// quickCheck reports whether v, a value decoded by encoding/json into
// an any, is valid for its schema for certain; false is "not sure": the
// general validator then decides, and names the problem.
type quickCheck func(v any) bool

// quickKeywords are the keywords a schema compiled by compileQuick may
// use; any other leaves it to the general validator.
var quickKeywords = []string{"type", "properties", "required", "additionalProperties", "items", "description", "title"}

// compileQuick compiles s, nil when s uses a keyword quickCheck does not
// know.
func compileQuick(s *jsonschema.Schema) quickCheck {
	if s == nil {
		return nil
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	if string(raw) == "true" { // the schema of any value
		return func(any) bool { return true }
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) != nil { // nor false, nor anything else
		return nil
	}
	for k := range keys {
		if !slices.Contains(quickKeywords, k) {
			return nil
		}
	}
	var others quickCheck // of the properties not named; nil: any value
	closed := false
	if ap, ok := keys["additionalProperties"]; ok {
		if closed = string(ap) == "false"; !closed {
			if others = compileQuick(s.AdditionalProperties); others == nil {
				return nil
			}
		}
	}
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	for _, t := range types {
		if !slices.Contains([]string{"null", "boolean", "string", "integer", "number", "object", "array"}, t) {
			return nil
		}
	}
	props := map[string]quickCheck{}
	for name, p := range s.Properties {
		if props[name] = compileQuick(p); props[name] == nil {
			return nil
		}
	}
	var items quickCheck
	if s.Items != nil {
		if items = compileQuick(s.Items); items == nil {
			return nil
		}
	}
	required := s.Required
	return func(v any) bool {
		if len(types) > 0 && !slices.Contains(types, jsonType(v)) && !(jsonType(v) == "integer" && slices.Contains(types, "number")) {
			return false
		}
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				check, named := props[k]
				switch {
				case named && !check(x), !named && closed, !named && others != nil && !others(x):
					return false
				}
			}
			for _, k := range required {
				if _, ok := v[k]; !ok {
					return false
				}
			}
		case []any:
			if items != nil {
				for _, x := range v {
					if !items(x) {
						return false
					}
				}
			}
		}
		return true
	}
}

// jsonType is the JSON type of a value encoding/json decoded into an any,
// as the general validator names it: a number without a fraction is an
// integer.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if _, f := math.Modf(v); f == 0 {
			return "integer"
		}
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return ""
}
