package connectors

import "github.com/google/jsonschema-go/jsonschema"

// CompileQuick is compileQuick, for the tests: nil when s is left to the
// general validator.
func CompileQuick(s *jsonschema.Schema) func(v any) bool {
	if q := compileQuick(s); q != nil {
		return q
	}
	return nil
}
