// Package mcpjson reads the JSON of MCP's JSON-RPC messages as the
// go-sdk reads them, for the code that reads them beside it (the fast
// paths' requests, the relay's upstream answers): whatever either takes,
// it reads as the SDK would have.
package mcpjson

import (
	"errors"

	segjson "github.com/segmentio/encoding/json"
)

// Unmarshal reads data into v as the go-sdk reads a message: keys
// matched to fields case-sensitively, and nesting refused beyond MaxDepth
// levels (the SDK's internal/json: segmentio/encoding's decoder with
// DontMatchCaseInsensitiveStructFields, after a depth check).
// encoding/json matches keys whatever their case, so a request naming
// both "params" and "Params", or "name" and "NAME", ran on the fast path
// another tool than the one the SDK, and any filter reading JSON as the
// specification does, saw (FuzzFastEnvelope's keys-in-another-case
// inputs); an upstream's answer naming "result" and "Result" was another
// result relayed than the SDK's client would have read.
func Unmarshal(data []byte, v any) error {
	if tooDeep(data) {
		return errTooDeep
	}
	// Parse is Decode without a Decoder's buffers: it reads the first value
	// and leaves what follows, as the SDK's one Decode does.
	_, err := segjson.Parse(data, v, segjson.DontMatchCaseInsensitiveStructFields)
	return err
}

// MaxDepth is the deepest nesting of objects and arrays the SDK reads.
const MaxDepth = 1000

var errTooDeep = errors.New("json: nested too deep")

// tooDeep reports whether data nests objects and arrays beyond MaxDepth,
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
			if depth++; depth > MaxDepth {
				return true
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return false
}
