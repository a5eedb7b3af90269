package toolresult

import (
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
)

// The 2026-07-28 protocol requires every tools/call, prompts/get and
// resources/read result to say whether it is complete (resultType). The
// go-sdk sets it in its own handlers for those methods and keeps the field
// unexported; unmarshalling is the only way it lets the field be set.

// Completable are the result types that say whether they are complete.
type Completable interface {
	mcp.CallToolResult | mcp.GetPromptResult | mcp.ReadResourceResult
}

// completeTemplate is a T whose resultType is "complete" and every
// exported field zero.
func completeTemplate[T Completable]() T {
	var t T
	if err := json.Unmarshal([]byte(`{"resultType":"complete"}`), any(&t)); err != nil {
		panic("toolresult: cannot mark a result complete: " + err.Error())
	}
	return t
}

var (
	completeCall     = completeTemplate[mcp.CallToolResult]()
	completePrompt   = completeTemplate[mcp.GetPromptResult]()
	completeResource = completeTemplate[mcp.ReadResourceResult]()
)

// Complete returns a copy of res marked complete, as the go-sdk marks the
// results of its own handlers: the template's unexported fields
// (resultType) with res's exported ones.
func Complete[T Completable](res *T) *T {
	var out T
	switch any(res).(type) {
	case *mcp.CallToolResult:
		out = any(completeCall).(T)
	case *mcp.GetPromptResult:
		out = any(completePrompt).(T)
	case *mcp.ReadResourceResult:
		out = any(completeResource).(T)
	}
	ov, rv := reflect.ValueOf(&out).Elem(), reflect.ValueOf(res).Elem()
	for i := range ov.NumField() {
		if ov.Type().Field(i).IsExported() {
			ov.Field(i).Set(rv.Field(i))
		}
	}
	return &out
}

// For returns res as a client of the protocol era newProtocol says
// (2026-07-28 or later) gets it: marked complete, as the go-sdk marks the
// results of its own handlers, unless it is nil or asks for input.
func For[T Completable](newProtocol bool, res *T) *T {
	if res == nil || !newProtocol {
		return res
	}
	if n, ok := any(res).(interface{ NeedsInput() bool }); ok && n.NeedsInput() {
		return res
	}
	return Complete(res)
}

// MaskRead masks what an upstream's prompts/get or resources/read
// answered, and its error, as Mask and MaskError mask a tool's: a result
// that no longer decodes once masked is withheld.
func MaskRead[T any](s *legate.Secrets, res *T, err error) (*T, error) {
	if s.Empty() {
		return res, err
	}
	err = MaskError(s, err)
	if res != nil {
		if res = MaskJSON(s, res); res == nil {
			return nil, &legate.Error{Code: legate.CodeAdapterMapping, Message: "the answer held a secret and was withheld"}
		}
	}
	return res, err
}
