package connectors

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/legate-mcp/legate"
)

// NewTool builds a Tool whose input schema is derived from In (its `json`
// and `jsonschema` tags) and whose arguments are decoded strictly into an In
// before run is called: an unknown or mistyped argument is INVALID_ARGUMENT.
func NewTool[In any](name, description string, class legate.Class, run func(ctx context.Context, call *Call, in *In) (*legate.Result, error)) Tool {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("connectors: tool %q: input schema: %v", name, err))
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		panic(fmt.Sprintf("connectors: tool %q: input schema: %v", name, err))
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("connectors: tool %q: input schema: %v", name, err))
	}
	quick := compileQuick(schema)
	return Tool{
		Name:        name,
		Description: description,
		InputSchema: raw,
		Class:       class,
		Run: func(ctx context.Context, call *Call) (*legate.Result, error) {
			in, err := decodeArgs[In](call.Args, resolved, quick)
			if err != nil {
				return nil, err
			}
			return run(ctx, call, in)
		},
	}
}

// Returning returns t with the output schema of Out, a struct whose `json`
// and `jsonschema` tags describe the tool's structured result.
func Returning[Out any](t Tool) Tool {
	schema, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("connectors: tool %q: output schema: %v", t.Name, err))
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		panic(fmt.Sprintf("connectors: tool %q: output schema: %v", t.Name, err))
	}
	t.OutputSchema = raw
	return t
}

// DecodeArgs validates args against the resolved schema (nil skips it) and
// decodes them strictly into a new In. Failures are INVALID_ARGUMENT errors
// naming the problem. A schema derived from In (NewTool) names every field
// and allows no other property, so arguments it validated are decoded as
// they are; without one, a decoder refuses unknown fields.
func DecodeArgs[In any](args json.RawMessage, resolved *jsonschema.Resolved) (*In, error) {
	return decodeArgs[In](args, resolved, nil)
}

// decodeArgs is DecodeArgs with quick, resolved's schema compiled
// (compileQuick), which validates most arguments without the general
// validator; nil leaves them all to it.
func decodeArgs[In any](args json.RawMessage, resolved *jsonschema.Resolved, quick quickCheck) (*In, error) {
	if len(bytes.TrimSpace(args)) == 0 || bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		args = []byte("{}")
	}
	in := new(In)
	if resolved != nil {
		var v any
		if err := json.Unmarshal(args, &v); err != nil {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "arguments are not valid JSON: %v", err)
		}
		if quick == nil || !quick(v) {
			if err := resolved.Validate(v); err != nil {
				return nil, legate.Errorf(legate.CodeInvalidArgument, "invalid arguments: %v", err)
			}
		}
		if err := json.Unmarshal(args, in); err != nil {
			return nil, legate.Errorf(legate.CodeInvalidArgument, "invalid arguments: %v", err)
		}
		return in, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "invalid arguments: %v", err)
	}
	return in, nil
}
