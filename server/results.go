package server

import (
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/catalog"
)

// The 2026-07-28 protocol requires every tools/call, prompts/get and
// resources/read result to say whether it is complete (resultType). The
// SDK sets it in its own handlers for those methods, which the gateway's
// middleware answers instead, and keeps the field unexported; so the
// gateway marks its results itself, as the SDK would: for a client of that
// protocol only, and never over an input_required result an upstream sent.

// newProtocol reports whether ss's client speaks 2026-07-28 or later: a
// stateless request's _meta names it, and the SDK records it as the
// session's initialize parameters.
func newProtocol(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= statelessVersion
}

// resultWithType is a result type with the unexported resultType.
type resultWithType interface {
	mcp.CallToolResult | mcp.GetPromptResult | mcp.ReadResourceResult
}

// completeTemplate is a T whose resultType is "complete" and every exported
// field zero. Unmarshalling is the only way the SDK lets the field be set.
func completeTemplate[T resultWithType]() T {
	var t T
	if err := json.Unmarshal([]byte(`{"resultType":"complete"}`), any(&t)); err != nil {
		panic("server: cannot mark a result complete: " + err.Error())
	}
	return t
}

var (
	completeCall     = completeTemplate[mcp.CallToolResult]()
	completePrompt   = completeTemplate[mcp.GetPromptResult]()
	completeResource = completeTemplate[mcp.ReadResourceResult]()
)

// markComplete returns a copy of res marked complete: tmpl's unexported
// fields (resultType) with res's exported ones.
func markComplete[T resultWithType](tmpl T, res *T) *T {
	out := tmpl
	ov, rv := reflect.ValueOf(&out).Elem(), reflect.ValueOf(res).Elem()
	for i := range ov.NumField() {
		if ov.Type().Field(i).IsExported() {
			ov.Field(i).Set(rv.Field(i))
		}
	}
	return &out
}

// completeCallResult marks a tools/call result for ss's client.
func completeCallResult(ss *mcp.ServerSession, res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil || res.NeedsInput() || !newProtocol(ss) {
		return res
	}
	return markComplete(completeCall, res)
}

// completePromptResult marks a prompts/get result for ss's client.
func completePromptResult(ss *mcp.ServerSession, res *mcp.GetPromptResult) *mcp.GetPromptResult {
	if res == nil || res.NeedsInput() || !newProtocol(ss) {
		return res
	}
	return markComplete(completePrompt, res)
}

// completeResourceResult marks a resources/read result for ss's client and
// makes its cache scope private, whatever the upstream said: which
// upstreams a caller may read through the gateway depends on who it is.
func completeResourceResult(ss *mcp.ServerSession, res *mcp.ReadResourceResult) *mcp.ReadResourceResult {
	if res == nil {
		return nil
	}
	res.CacheScope = catalog.CallerCache.CacheScope
	if res.NeedsInput() || !newProtocol(ss) {
		return res
	}
	return markComplete(completeResource, res)
}
