package relay

import (
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// JSON-RPC codes the go-sdk uses for failures on Legate's side of the
// connection, never for an upstream's answer.
const (
	codeClientClosing = -32003 // the session is closed
	codeServerClosing = -32004 // the connection broke while writing
	codeRejected      = -32005 // the transport failed: HTTP 5xx/429, refused or dropped connection
)

// Answered reports whether err is the upstream's own JSON-RPC error. The
// go-sdk also reports transport failures as *jsonrpc.Error values (an
// HTTP 500 or a dropped connection is wrapped in "rejected by transport"):
// those are the upstream's failures, not answers.
func Answered(err error) bool {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		return false
	}
	switch rpcErr.Code {
	case codeClientClosing, codeServerClosing, codeRejected:
		return false
	}
	return true
}
