package server

import "github.com/modelcontextprotocol/go-sdk/mcp"

// The 2026-07-28 protocol requires every tools/call, prompts/get and
// resources/read result to say whether it is complete (resultType). The
// SDK sets it in its own handlers for those methods, which the gateway's
// middleware answers instead; so the gateway marks its results itself
// (toolresult.For), as the SDK would: for a client of that protocol only,
// and never over an input_required result an upstream sent.

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
