package upstream

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

// An upstream reached over HTTP may echo the credentials its header_env
// gives it: in a result, a JSON-RPC error, a log message, an HTTP error's
// body. So every response of such an upstream is masked as it is read, at
// the bottom of its HTTP client, before the SDK client, the relay or the
// tap sees a byte of it: no path from the upstream to a client, a log or
// the store goes around it. Content codings are undone first, so that a
// compressed body is masked too.

// maskTransport masks the secrets in every response of base.
type maskTransport struct {
	base    http.RoundTripper
	secrets *legate.Secrets
}

func (t *maskTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if err := connectors.DecodeBody(resp); err != nil {
		drain(resp)
		return nil, fmt.Errorf("upstream response: %w", err)
	}
	for _, vs := range resp.Header {
		for i, v := range vs {
			vs[i] = t.secrets.MaskString(v)
		}
	}
	resp.Body = t.secrets.Reader(resp.Body)
	resp.Header.Del("Content-Length") // masking changes it
	resp.ContentLength = -1
	return resp, nil
}

// CloseIdleConnections closes base's idle connections, as
// http.Client.CloseIdleConnections asks of a transport.
func (t *maskTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

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
