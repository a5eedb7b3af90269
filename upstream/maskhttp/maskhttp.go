// Package maskhttp masks an upstream MCP server's credentials in its HTTP
// responses. An upstream reached over HTTP may echo the credentials its
// header_env gives it: in a result, a JSON-RPC error, a log message, an
// HTTP error's body. So every response of such an upstream is masked as
// it is read, at the bottom of its HTTP client ([Transport]), before the
// SDK client, the relay or the tap sees a byte of it: no path from the
// upstream to a client, a log or the store goes around it. Content
// codings are undone first, so that a compressed body is masked too. What
// is decoded from a response is masked again (Result, Raw, Err): a secret
// may be spelled on the wire in escapes that only decoding brings
// together.
package maskhttp

import (
	"fmt"
	"io"
	"net/http"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/internal/contentcoding"
)

// Transport masks Secrets in every response of Base: its headers and its
// body, whose length masking changes. Current, when set, gives the secrets
// at the time of each request in place of Secrets (an upstream whose
// credentials are resolved when a session opens).
type Transport struct {
	Base    http.RoundTripper
	Secrets *legate.Secrets
	Current func() *legate.Secrets
}

func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	secrets := t.Secrets
	if t.Current != nil {
		secrets = t.Current()
	}
	resp, err := t.Base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if err := contentcoding.DecodeBody(resp); err != nil {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		return nil, fmt.Errorf("upstream response: %w", err)
	}
	for _, vs := range resp.Header {
		for i, v := range vs {
			vs[i] = secrets.MaskString(v)
		}
	}
	resp.Body = secrets.Reader(resp.Body)
	resp.Header.Del("Content-Length") // masking changes it
	resp.ContentLength = -1
	return resp, nil
}

// CloseIdleConnections closes Base's idle connections, as
// http.Client.CloseIdleConnections asks of a transport.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.Base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

var _ http.RoundTripper = (*Transport)(nil)
