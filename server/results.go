package server

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/server/toolresult"
)

// The 2026-07-28 protocol requires every tools/call, prompts/get and
// resources/read result to say whether it is complete (resultType). The
// SDK sets it in its own handlers for those methods, which the gateway's
// middleware answers instead; so the gateway marks its results itself
// (toolresult.Complete), as the SDK would: for a client of that protocol
// only, and never over an input_required result an upstream sent.

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

// completeCallResult marks a tools/call result for ss's client.
func completeCallResult(ss *mcp.ServerSession, res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil || res.NeedsInput() || !newProtocol(ss) {
		return res
	}
	return toolresult.Complete(res)
}

// completePromptResult marks a prompts/get result for ss's client.
func completePromptResult(ss *mcp.ServerSession, res *mcp.GetPromptResult) *mcp.GetPromptResult {
	if res == nil || res.NeedsInput() || !newProtocol(ss) {
		return res
	}
	return toolresult.Complete(res)
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
	return toolresult.Complete(res)
}
