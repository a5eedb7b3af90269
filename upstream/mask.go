package upstream

import (
	"bytes"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// An upstream's HTTP responses are masked as they are read (package
// maskhttp); what is decoded from them is masked again, whatever escapes
// spelled a secret on the wire (redact, redactRaw, redactErr).

// redactErr masks the secrets in an upstream's JSON-RPC error, as decoded.
func (u *Upstream) redactErr(err error) error {
	var rpcErr *jsonrpc.Error
	if u.secrets.Empty() || !errors.As(err, &rpcErr) {
		return err
	}
	msg := u.secrets.MaskString(rpcErr.Message)
	data := rpcErr.Data
	if masked, ok := u.secrets.DecodedLeak(data); ok {
		data = masked
	} else if u.secrets.Contains(data) {
		data = u.secrets.Mask(data, false)
	}
	if msg == rpcErr.Message && bytes.Equal(data, rpcErr.Data) {
		return err
	}
	return &jsonrpc.Error{Code: rpcErr.Code, Message: msg, Data: data}
}
