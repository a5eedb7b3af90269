package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// ArgsHash is the SHA-256 of the arguments' canonical JSON (sorted keys,
// no spaces), the value an approval is bound to. Arguments already in
// that form, as most clients send small ones, are hashed as they are;
// any others are decoded and encoded again.
func ArgsHash(args json.RawMessage) string {
	var sum [sha256.Size]byte
	if canonical(args) {
		sum = sha256.Sum256(args)
	} else {
		sum = sha256.Sum256(canonicalize(args))
	}
	return hex.EncodeToString(sum[:])
}

// canonicalize is the arguments' canonical JSON as encoding/json writes
// it: decoded (numbers as written) and encoded again; "{}" for none, the
// bytes as they are when they do not decode.
func canonicalize(args json.RawMessage) []byte {
	if len(bytes.TrimSpace(args)) == 0 {
		return []byte("{}")
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return args
	}
	canon, _ := json.Marshal(v)
	return canon
}

// canonical reports whether b is one JSON value that canonicalize would
// give back unchanged: no space outside strings, each object's keys in
// strictly ascending byte order, and strings of printable ASCII that
// encoding/json writes as they are (no escape, no '<', '>' or '&', which
// it escapes). Numbers are kept as written (json.Number). A "false" for
// canonical JSON only costs the slow path; a "true" must never be wrong
// for input that decodes.
func canonical(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	n, ok := canonValue(b, 0, 0)
	return ok && n == len(b)
}

// maxCanonDepth bounds the nesting canonical follows; deeper arguments
// take the slow path.
const maxCanonDepth = 32

// canonValue scans the value at b[i:], returning the index after it.
func canonValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) || depth > maxCanonDepth {
		return 0, false
	}
	switch c := b[i]; {
	case c == '{':
		i++
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		var prev []byte
		for first := true; ; first = false {
			start := i
			end, ok := canonString(b, i)
			if !ok {
				return 0, false
			}
			key := b[start+1 : end-1]
			if !first && bytes.Compare(prev, key) >= 0 {
				return 0, false // out of order, or repeated (the decoder keeps the last)
			}
			prev = key
			if end >= len(b) || b[end] != ':' {
				return 0, false
			}
			if i, ok = canonValue(b, end+1, depth+1); !ok || i >= len(b) {
				return 0, false
			}
			switch b[i] {
			case ',':
				i++
			case '}':
				return i + 1, true
			default:
				return 0, false
			}
		}
	case c == '[':
		i++
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = canonValue(b, i, depth+1); !ok || i >= len(b) {
				return 0, false
			}
			switch b[i] {
			case ',':
				i++
			case ']':
				return i + 1, true
			default:
				return 0, false
			}
		}
	case c == '"':
		return canonString(b, i)
	case c == '-' || c >= '0' && c <= '9':
		return canonNumber(b, i)
	case bytes.HasPrefix(b[i:], []byte("true")):
		return i + 4, true
	case bytes.HasPrefix(b[i:], []byte("false")):
		return i + 5, true
	case bytes.HasPrefix(b[i:], []byte("null")):
		return i + 4, true
	}
	return 0, false
}

// canonString scans a string at b[i:] that encoding/json would write as
// it is.
func canonString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20 || c >= 0x7f || c == '\\' || c == '<' || c == '>' || c == '&':
			return 0, false
		}
	}
	return 0, false
}

// canonNumber scans a number of JSON's grammar at b[i:].
func canonNumber(b []byte, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i
	}
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(i)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}
