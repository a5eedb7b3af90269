package toolresult

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
)

// Error turns a failed call into the result a client sees: isError, the
// text "CODE: message", and the error's details {code, message,
// retry_after_seconds, ...} in _meta under legate.ErrorMetaKey, for every
// tool, and as structured content {"error": {...}} (which the gateway
// leaves out for a tool with an output schema).
func Error(err error) *mcp.CallToolResult {
	ce := &legate.Error{Code: legate.CodeOf(err), Message: err.Error()}
	errors.As(err, &ce)
	body := map[string]any{"code": ce.Code, "message": ce.Message}
	for k, v := range ce.Details {
		body[k] = v
	}
	if ce.RetryAfter > 0 {
		body["retry_after_seconds"] = ce.RetryAfter.Seconds()
	}
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: string(ce.Code) + ": " + ce.Message}},
		StructuredContent: map[string]any{"error": body},
		Meta:              mcp.Meta{legate.ErrorMetaKey: body},
	}
}

// ProtocolError returns the JSON-RPC error to relay to the client as a
// protocol error: one an upstream answered with. An error the gateway or a
// connector classed (a *legate.Error, even one wrapping a JSON-RPC
// error from a broken transport) is a tool failure instead, and nil is
// returned.
func ProtocolError(err error) *jsonrpc.Error {
	var ce *legate.Error
	if errors.As(err, &ce) {
		return nil
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return rpcErr
	}
	return nil
}

// ErrorAttrs describe a failed call's error for the log: its code and a
// short hash of the text the client was given, never that text, which can
// quote the call's arguments (NOT_FOUND: no approval "…") — the log keeps
// the audit's promise to store no argument value. The hash lets an
// operator match a message a client reports.
func ErrorAttrs(err error) []any {
	if rpcErr := ProtocolError(err); rpcErr != nil {
		return []any{"rpc_code", rpcErr.Code, "error_hash", TextHash(rpcErr.Message)}
	}
	text := Error(err).Content[0].(*mcp.TextContent).Text
	return []any{"code", legate.CodeOf(err), "error_hash", TextHash(text)}
}

// TextHash is a short hash of s: 12 hex digits of its SHA-256.
func TextHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:6])
}

// ErrorFor is Error for a call to tool. A tool that declares an output
// schema has its error details in _meta only, not in structured content,
// which clients check against that schema even on errors.
func ErrorFor(tool *mcp.Tool, err error) *mcp.CallToolResult {
	res := Error(err)
	if tool != nil && tool.OutputSchema != nil {
		res.StructuredContent = nil
	}
	return res
}
