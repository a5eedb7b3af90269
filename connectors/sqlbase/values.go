package sqlbase

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// JSON-ready forms of database values, shared by the dialects so that a
// client reads the same shapes from every database: numbers stay numbers,
// times are RFC 3339, binary is base64, NULL is null.

// Time is t in RFC 3339 with its fraction of a second, or a full date
// (2006-01-02) when dateOnly.
func Time(t time.Time, dateOnly bool) string {
	if dateOnly {
		return t.Format(time.DateOnly)
	}
	return t.Format(time.RFC3339Nano)
}

// Float is f as a JSON number, or as the string "NaN", "Infinity" or
// "-Infinity", which JSON cannot hold as numbers.
func Float(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}

// Decimal is the exact decimal text s as a JSON number, however many
// digits it has, or s itself when it is not a JSON number (NaN,
// Infinity).
func Decimal(s string) any {
	if s != "" && (s[0] == '-' || isDigit(s[0])) && json.Valid([]byte(s)) {
		return json.Number(s)
	}
	return s
}

// Bytes is binary data in standard base64.
func Bytes(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// JSONValue is a JSON document's text as its value, or the text as a
// string when it does not parse.
func JSONValue(b []byte) any {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || dec.More() {
		return string(b)
	}
	return v
}

// keyValue is one keyset value in a cursor, tagged with its Go type so
// that the next page binds it as the same type.
type keyValue struct {
	I *json.Number `json:"i,omitempty"` // integer
	F *float64     `json:"f,omitempty"` // floating point
	S *string      `json:"s,omitempty"` // text, or any value bound as text
	B []byte       `json:"b,omitempty"` // binary
	O *bool        `json:"o,omitempty"` // boolean
	T *time.Time   `json:"t,omitempty"` // time
}

// encodeKey tags a driver value for a cursor. A NULL key cannot continue
// a keyset: the caller must choose non-null key columns.
func encodeKey(v any) (keyValue, error) {
	switch x := v.(type) {
	case nil:
		return keyValue{}, fmt.Errorf("a keyset column is NULL in the last row: keyset columns must be NOT NULL")
	case int64, int32, int16, int8, int, uint64, uint32, uint16, uint8, uint:
		n := json.Number(fmt.Sprint(x))
		return keyValue{I: &n}, nil
	case float64:
		return keyValue{F: &x}, nil
	case float32:
		f := float64(x)
		return keyValue{F: &f}, nil
	case string:
		return keyValue{S: &x}, nil
	case []byte:
		return keyValue{B: append([]byte{}, x...)}, nil
	case bool:
		return keyValue{O: &x}, nil
	case time.Time:
		return keyValue{T: &x}, nil
	case fmt.Stringer:
		s := x.String()
		return keyValue{S: &s}, nil
	}
	s := fmt.Sprint(v)
	return keyValue{S: &s}, nil
}

// decode is the value to bind for k.
func (k keyValue) decode() (any, error) {
	switch {
	case k.I != nil:
		return k.I.Int64()
	case k.F != nil:
		return *k.F, nil
	case k.S != nil:
		return *k.S, nil
	case k.B != nil:
		return k.B, nil
	case k.O != nil:
		return *k.O, nil
	case k.T != nil:
		return *k.T, nil
	}
	return nil, ErrCursor
}

// bindParam converts one JSON argument to the value bound to a parameter:
// integers as int64, other numbers as float64 (mysql) or their exact text
// (postgres, which parses it as the parameter's type), objects and arrays
// as their JSON text.
func bindParam(d Dialect, raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, nil
		}
		if d == Postgres {
			return x.String(), nil
		}
		return x.Float64()
	case map[string]any, []any:
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return nil, err
		}
		return b.String(), nil
	}
	return v, nil
}
