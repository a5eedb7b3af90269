package relay

import (
	"context"
	"net/http"

	"github.com/legate-mcp/legate"
)

// An upstream's HTTP server may close a pooled connection the moment a
// request is written on it (Node's and uvicorn's close one idle for 5 s).
// Go's transport then sends the request again on a new connection only
// when it deems the request idempotent: a POST that carries an
// Idempotency-Key header, which, given with no value, is not sent. A call
// that only reads (class read) is marked so; one that may write is not: the
// upstream may have acted on it before the connection closed.

type replayKey struct{}

// Replayable returns ctx, marked when class is read (the call only
// reads): the requests sent under a marked context may be sent again when
// the pooled connection they were written on closes before any answer.
func Replayable(ctx context.Context, class legate.Class) context.Context {
	if class != legate.ClassRead {
		return ctx
	}
	return context.WithValue(ctx, replayKey{}, true)
}

func replayable(ctx context.Context) bool {
	v, _ := ctx.Value(replayKey{}).(bool)
	return v
}

// replayHeader makes Go's transport treat a request as idempotent; with no
// value, it is not written.
const replayHeader = "Idempotency-Key"

// ReplayTransport marks the requests made under a Replayable context (by
// the go-sdk client, for one) idempotent before Base sends them; a request
// that is marked already, as Conn.Post marks its own, goes as it is.
type ReplayTransport struct{ Base http.RoundTripper }

func (t ReplayTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if _, marked := r.Header[replayHeader]; !marked && replayable(r.Context()) {
		r = r.Clone(r.Context())
		r.Header[replayHeader] = nil
	}
	return t.Base.RoundTrip(r)
}

// CloseIdleConnections closes Base's idle connections, as
// http.Client.CloseIdleConnections asks of a transport.
func (t ReplayTransport) CloseIdleConnections() {
	if c, ok := t.Base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
