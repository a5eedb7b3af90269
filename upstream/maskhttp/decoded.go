package maskhttp

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
)

// An upstream's HTTP responses are masked as they are read (Transport);
// what is decoded from them is masked again, whatever escapes spelled a
// secret on the wire (Result, Raw, Err).

// Result masks the upstream's own credentials (header_env values) in a
// result, should it echo them: they must never reach a client. The
// response was masked as it was read (Transport); this sees the result as
// decoded, whatever escapes spelled it on the wire.
func Result(secrets *legate.Secrets, res *mcp.CallToolResult) *mcp.CallToolResult {
	if secrets.Empty() {
		return res
	}
	b, err := json.Marshal(res)
	if err != nil || !secrets.Contains(b) {
		return res
	}
	var out mcp.CallToolResult
	if err := json.Unmarshal(secrets.Mask(b, false), &out); err != nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: withheld}}}
	}
	return &out
}

// withheld replaces a result that masking would leave broken.
const withheld = "the upstream's result held a credential and was withheld"

// Raw is Result for a result relayed as the upstream sent it (masked as
// it was read): only a secret spelled in a mix of escapes is left to find.
// It reports whether it masked one; the caller then reads the result again.
func Raw(secrets *legate.Secrets, raw json.RawMessage) (json.RawMessage, bool) {
	masked, ok := secrets.DecodedLeak(raw)
	if !ok {
		return raw, false
	}
	if !json.Valid(masked) {
		masked = json.RawMessage(`{"isError":true,"content":[{"type":"text","text":"` + withheld + `"}]}`)
	}
	return masked, true
}

// Err masks the secrets in an upstream's JSON-RPC error, as decoded.
func Err(secrets *legate.Secrets, err error) error {
	var rpcErr *jsonrpc.Error
	if secrets.Empty() || !errors.As(err, &rpcErr) {
		return err
	}
	msg := secrets.MaskString(rpcErr.Message)
	data := rpcErr.Data
	if masked, ok := secrets.DecodedLeak(data); ok {
		data = masked
	} else if secrets.Contains(data) {
		data = secrets.Mask(data, false)
	}
	if msg == rpcErr.Message && bytes.Equal(data, rpcErr.Data) {
		return err
	}
	return &jsonrpc.Error{Code: rpcErr.Code, Message: msg, Data: data}
}
