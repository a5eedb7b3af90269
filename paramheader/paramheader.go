// Package paramheader checks the Mcp-Param headers of protocol 2026-07-28
// (SEP-2243): a client mirrors each tools/call argument that the tool's
// input schema marks with x-mcp-header into an Mcp-Param-<Name> header,
// so that intermediaries can route on it without reading the body. The
// go-sdk checks them only for tools registered on its own server, which a
// gateway's are not.
package paramheader

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// protocolVersion is the first protocol with parameter headers.
const protocolVersion = "2026-07-28"

// paramHeader is one argument, by its path of property names, that a tool
// mirrors into a header.
type paramHeader struct {
	path   []string
	header string
}

// schemaProp is what a property of an input schema says about headers.
type schemaProp struct {
	XMCPHeader string                `json:"x-mcp-header"`
	Properties map[string]schemaProp `json:"properties"`
}

// paramHeaders lists the arguments t mirrors into headers.
func paramHeaders(t *mcp.Tool) []paramHeader {
	if t == nil {
		return nil
	}
	raw, _ := t.InputSchema.(json.RawMessage) // as the catalog holds every schema
	if !strings.Contains(string(raw), `"x-mcp-header"`) {
		return nil // the common case, without decoding the schema
	}
	var root schemaProp
	if json.Unmarshal(raw, &root) != nil {
		return nil
	}
	return collectParamHeaders(root.Properties, nil, nil)
}

func collectParamHeaders(props map[string]schemaProp, prefix []string, out []paramHeader) []paramHeader {
	for name, p := range props {
		path := append(prefix[:len(prefix):len(prefix)], name)
		if p.XMCPHeader != "" {
			out = append(out, paramHeader{path: path, header: "Mcp-Param-" + p.XMCPHeader})
		}
		out = collectParamHeaders(p.Properties, path, out)
	}
	return out
}

// Check compares a 2026-07-28 request's Mcp-Param headers with the
// arguments of its call to t: a header must be present exactly when its
// argument is, and equal to it. The error is the JSON-RPC error the request
// gets (with HTTP status 400 where none has been sent yet).
func Check(h http.Header, t *mcp.Tool, args json.RawMessage) *jsonrpc.Error {
	if h.Get("Mcp-Protocol-Version") < protocolVersion {
		return nil
	}
	for _, b := range paramHeaders(t) {
		if err := checkParamHeader(h, b, args); err != nil {
			return &jsonrpc.Error{Code: mcp.CodeHeaderMismatch, Message: "header mismatch: " + err.Error()}
		}
	}
	return nil
}

func checkParamHeader(h http.Header, b paramHeader, args json.RawMessage) error {
	name := strings.Join(b.path, ".")
	got, present := h.Get(b.header), len(h.Values(b.header)) > 0
	val, ok := argumentAt(args, b.path)
	if !ok || string(val) == "null" {
		if present {
			return fmt.Errorf("unexpected %s header for absent or null argument %q", b.header, name)
		}
		return nil
	}
	if !present {
		return fmt.Errorf("missing %s header for argument %q", b.header, name)
	}
	decoded, ok := decodeParamHeader(got)
	if !ok {
		return fmt.Errorf("%s header is not valid base64", b.header)
	}
	want, integer, ok := headerForm(val)
	if !ok {
		return fmt.Errorf("%s header present but argument %q is not a string, integer or boolean", b.header, name)
	}
	if decoded != want && !(integer && sameNumber(decoded, want)) {
		return fmt.Errorf("%s header does not match argument %q", b.header, name)
	}
	return nil
}

// argumentAt is the raw value at path in a call's arguments object.
func argumentAt(args json.RawMessage, path []string) (json.RawMessage, bool) {
	cur := args
	for _, p := range path {
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) != nil {
			return nil, false
		}
		var ok bool
		if cur, ok = obj[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// maxSafeInteger is the largest integer a JSON number carries exactly in
// every client (IEEE-754 doubles).
const maxSafeInteger = 1<<53 - 1

// headerForm is an argument as its header carries it: a string as is, a
// boolean as true or false, an integer in decimal (integer is true); other
// values have none.
func headerForm(v json.RawMessage) (form string, integer, ok bool) {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return "", false, false
	}
	switch x := x.(type) {
	case string:
		return x, false, true
	case bool:
		return strconv.FormatBool(x), false, true
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > maxSafeInteger {
			return "", false, false
		}
		return strconv.FormatInt(int64(x), 10), true, true
	}
	return "", false, false
}

// sameNumber reports whether a header names the integer want in another
// notation (42.0, 4.2e1), which clients may send.
func sameNumber(header, want string) bool {
	h, err := strconv.ParseFloat(header, 64)
	w, _ := strconv.ParseFloat(want, 64)
	return err == nil && h == w
}

// decodeParamHeader undoes the =?base64?…?= form a client uses for values
// that are not plain printable ASCII; any other value is literal.
func decodeParamHeader(v string) (string, bool) {
	enc, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	if enc, ok = strings.CutSuffix(enc, "?="); !ok {
		return v, true
	}
	b, err := base64.StdEncoding.Strict().DecodeString(enc)
	return string(b), err == nil
}
