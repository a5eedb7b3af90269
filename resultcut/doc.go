// Package resultcut keeps a model's context from being flooded by one
// tool result: a result over the call's token budget reaches the client
// cut, within the budget, around a notice of what was cut, and its whole
// is kept for the caller to read page by page.
//
// The budget of a call is its profile's result_budget_tokens, lowered by
// the call's _meta MetaKey (which sets one where the profile has none);
// with neither there is none, and results pass untouched and unread. The
// pure part of the package — the estimate (Tokens, ResultTokens), Cut and
// the paging of the kept document — works on mcp.CallToolResult values
// alone; Keeper applies it to calls (Apply, at the MCP edge where the
// call's _meta is known), keeps the whole in the store (store.ResultStore:
// any replica serves it, to the same tenant and principal only, until it
// expires) and serves it back as the built-in tool legate.result_read and
// the resource legate://results/{ref}.
//
// Cutting: text blocks are cut by lines, keeping a head (two thirds of
// the text's share) and a tail (one third) and ending each at a
// paragraph's end where one is near; a single line too long is cut at a
// space. A text block that is one JSON object or array, and structured
// content, are trimmed as JSON (jsontrim.go), so that they stay valid.
// Images, audio and blobs are never cut, nor counted.
package resultcut
