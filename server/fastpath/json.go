package fastpath

import (
	"errors"

	segjson "github.com/segmentio/encoding/json"
)

// unmarshal reads a request's JSON as the go-sdk's server reads it, so
// that whatever the fast paths take they read as the SDK would have: keys
// matched to fields case-sensitively, and nesting refused beyond
// maxDepth levels (the SDK's internal/json: segmentio/encoding's decoder
// with DontMatchCaseInsensitiveStructFields, after a depth check).
// encoding/json matches keys whatever their case, so a request naming
// both "params" and "Params", or "name" and "NAME", ran on the fast path
// another tool than the one the SDK, and any filter reading JSON as the
// specification does, saw (FuzzFastEnvelope's keys-in-another-case inputs).
func unmarshal(data []byte, v any) error {
	if tooDeep(data) {
		return errTooDeep
	}
	// Parse is Decode without a Decoder's buffers: it reads the first value
	// and leaves what follows, as the SDK's one Decode does.
	_, err := segjson.Parse(data, v, segjson.DontMatchCaseInsensitiveStructFields)
	return err
}

// maxDepth is the deepest nesting of objects and arrays the SDK reads.
const maxDepth = 1000

var errTooDeep = errors.New("json: nested too deep")

// tooDeep reports whether data nests objects and arrays beyond maxDepth,
// strings skipped.
func tooDeep(data []byte) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > maxDepth {
				return true
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return false
}
