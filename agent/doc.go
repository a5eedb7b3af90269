// Package agent is Legate's agent: an instruction in, the work done with
// the tools of this machine, a record out. `legate agent run` and the
// built-in tool legate.agent.run both run it.
//
// Both sides of MCP live in one process. The loop reaches the catalog
// through an ordinary MCP client connected to the gateway's own MCP server
// over an in-memory transport, no socket involved, under the caller's
// principal: it sees exactly the tools the caller's profile allows
// (narrowed by agent.connectors), and every call it makes takes the call
// path of every client: policy, approvals, rate limits, audit, pinning. A
// call held for approval pauses the run, whose record says which approval
// it waits for, until the approval is decided or the run's deadline.
//
// Models sit behind the small Model interface, with two implementations
// that speak the wire formats over net/http (wire.go): Anthropic's Messages
// API, and OpenAI's chat completions API for OpenAI and every
// OpenAI-compatible provider. Every model call is
// streamed; one that stalls is logged as the stall grows; each attempt has
// its own deadline; a stall, a dropped stream, a 5xx or a 429 is tried
// again with jittered exponential backoff (Retry-After honoured), a 400,
// 401, 403 or 404 never; the conversation is untouched between attempts.
//
// A run is bounded by max_turns, max_tool_calls, its deadline and a cap on
// each tool result the model sees. Its Record (reply, turns, how it
// stopped, host, workspace, tools and skills used, usage, retries, every
// call with its result, the conversation) is kept in the store as the
// agent's history, updated as the run goes, so that a run that fails
// leaves what it did; --resume continues a run's conversation.
package agent
