// Package dial holds what package upstream needs to reach an upstream MCP
// server and keep the connection: its HTTP client with its own connection
// pool and fixed headers, the transport of a session (a stdio child's
// environment and the logging of its stderr, a legacy SSE connection that
// outlives the call that opened it, Streamable HTTP), and when the client
// session a per_client session serves ends.
package dial

import (
	"context"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/telemetry/spans"
	"github.com/legate-mcp/legate/upstream/relay"
	"github.com/legate-mcp/legate/upstream/upconfig"
)

// headerTransport adds fixed headers to every request, then the
// credentials' resolved ones (nil: none).
type headerTransport struct {
	base  http.RoundTripper
	h     http.Header
	creds *Credentials
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	if t.creds != nil {
		for k, v := range t.creds.Headers() {
			r.Header[k] = v
		}
	}
	return t.base.RoundTrip(r)
}

// CloseIdleConnections closes base's idle connections, as
// http.Client.CloseIdleConnections asks of a transport.
func (t *headerTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// idleConnTimeout is how long an upstream's connection may idle in its
// pool before it is closed.
const idleConnTimeout = 4 * time.Second

// NewHTTPClient gives an upstream its own connection pool, sized to its
// concurrency (max_concurrency) so that calls under load reuse connections.
// Every request carries the headers h, and those of creds as last resolved
// (Credentials.Set) when it has references to resolve; creds may be nil.
func NewHTTPClient(concurrency int, h http.Header, creds *Credentials) *http.Client {
	tr := &http.Transport{
		Proxy:               nil, // never from the environment
		MaxIdleConns:        concurrency * 2,
		MaxIdleConnsPerHost: concurrency * 2,
		// Under the 5 s after which Node's and uvicorn's HTTP servers,
		// behind most MCP servers, close an idle connection: a request
		// sent on a connection the server is closing that moment is
		// reset, and a POST is not retried (the upstream may have acted
		// on it) unless it only reads (relay.Replayable), so the client
		// lets go first.
		IdleConnTimeout:       idleConnTimeout,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 0, // SSE responses stream for the call's whole life
		ForceAttemptHTTP2:     true,
	}
	// Within a traced call, each request is a span and carries traceparent.
	rt := spans.Transport(relay.ReplayTransport{Base: tr})
	if len(h) > 0 || (creds != nil && creds.refs) {
		rt = &headerTransport{base: rt, h: h, creds: creds}
	}
	return &http.Client{Transport: rt}
}

// Session is what the transport of one upstream session is made of.
type Session struct {
	Log *slog.Logger
	// Stdio gets each message of a stdio child's output; SSE gives the
	// legacy SSE stream's HTTP client and HTTP is Streamable HTTP's, both
	// with their event streams tapped (relay.TapTransport).
	Stdio func([]byte)
	SSE   func() *http.Client
	HTTP  *http.Client
	// Max is the upstream's bound on one message (max_result_bytes); Life
	// ends an SSE stream.
	Max  int64
	Life context.Context
}

// sdkMax is the go-sdk's own bound on a message, left above Legate's: the
// SDK ends the whole session at its bound, where Legate fails one call.
func (s Session) sdkMax() int {
	return int(min(s.Max+64<<10, math.MaxInt32))
}

// Transport is the MCP transport of a session of the upstream c: a stdio
// child, a legacy SSE stream or Streamable HTTP.
func Transport(c *upconfig.Config, s Session) mcp.Transport {
	if len(c.Command) > 0 {
		cmd := exec.Command(c.Command[0], c.Command[1:]...)
		cmd.Env = ChildEnv(c.Env)
		cmd.Dir = c.Dir
		cmd.Stderr = &LineLogger{Log: s.Log}
		return &relay.StdioTransport{Cmd: cmd, Tap: s.Stdio, Max: s.Max}
	}
	if c.Transport == "sse" {
		// The legacy transport's one event stream carries every message:
		// it is tapped like a Streamable HTTP response. It lives as long as
		// the session, not the connect call that opens it.
		return &OutliveConnect{Transport: &mcp.SSEClientTransport{Endpoint: c.URL, HTTPClient: s.SSE(), MaxEventSize: s.sdkMax()}, Life: s.Life}
	}
	return &mcp.StreamableClientTransport{Endpoint: c.URL, HTTPClient: s.HTTP, MaxRetries: 1, MaxEventSize: s.sdkMax()}
}

// OutliveConnect connects a transport whose connection keeps the context it
// was connected with (the legacy SSE client's event stream does): the
// connection lives until it is closed or life ends, while connecting still
// gives up when the caller's context ends.
type OutliveConnect struct {
	mcp.Transport
	Life context.Context
}

func (t *OutliveConnect) Connect(ctx context.Context) (mcp.Connection, error) {
	lctx, cancel := context.WithCancel(t.Life)
	stop := context.AfterFunc(ctx, cancel)
	conn, err := t.Transport.Connect(lctx)
	if !stop() {
		// ctx ended while connecting: lctx is cancelled.
		if err == nil {
			conn.Close()
		}
		return nil, ctx.Err()
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &closeHook{Connection: conn, after: cancel}, nil
}

// closeHook runs after when the connection closes.
type closeHook struct {
	mcp.Connection
	after func()
}

func (c *closeHook) Close() error {
	err := c.Connection.Close()
	c.after()
	return err
}

// ChildEnv is the whole environment of a stdio upstream: what the config
// gives, plus PATH and HOME when it does not set them.
func ChildEnv(env map[string]string) []string {
	out := make([]string, 0, len(env)+2)
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	if _, ok := env["PATH"]; !ok {
		path := os.Getenv("PATH")
		if path == "" {
			path = "/usr/local/bin:/usr/bin:/bin"
		}
		out = append(out, "PATH="+path)
	}
	if _, ok := env["HOME"]; !ok {
		if home, err := os.UserHomeDir(); err == nil {
			out = append(out, "HOME="+home)
		}
	}
	return out
}

// LineLogger logs a stdio upstream's stderr line by line, on the
// upstream's logger (which names the upstream).
type LineLogger struct {
	Log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

func (l *LineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := strings.IndexByte(string(l.buf), '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimRight(string(l.buf[:i]), "\r"); line != "" {
			l.Log.Info("upstream stderr", "line", line)
		}
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > 64<<10 { // a line with no end: log what we have
		l.Log.Info("upstream stderr", "line", string(l.buf))
		l.buf = l.buf[:0]
	}
	return len(p), nil
}

var _ io.Writer = (*LineLogger)(nil)

// ClientEnds tells when client sessions end (a per_client upstream's
// session ends with its client's), with one watcher a session.
type ClientEnds struct {
	mu sync.Mutex
	by map[*mcp.ServerSession]chan struct{}
}

// NewClientEnds returns a ClientEnds watching no session yet.
func NewClientEnds() *ClientEnds {
	return &ClientEnds{by: map[*mcp.ServerSession]chan struct{}{}}
}

// Of returns a channel closed when the client session ends.
func (e *ClientEnds) Of(ss *mcp.ServerSession) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ch, ok := e.by[ss]; ok {
		return ch
	}
	ch := make(chan struct{})
	e.by[ss] = ch
	go func() {
		ss.Wait()
		e.mu.Lock()
		delete(e.by, ss)
		e.mu.Unlock()
		close(ch)
	}()
	return ch
}

// Credentials are the secret headers of an upstream reached over HTTP:
// those of header_env, fixed when the upstream is built, and those of
// token and headers, resolved again each time a session opens (Set).
// Secrets is what of them is masked in all the upstream returns. A nil
// *Credentials (a stdio upstream) holds none.
type Credentials struct {
	refs     bool // token or headers are resolved when a session opens
	envParts []string
	headers  atomic.Pointer[http.Header]
	secrets  atomic.Pointer[legate.Secrets]
}

// NewCredentials holds the secret parts of env's values (header_env's);
// refs says whether headers are to be resolved (Set) too.
func NewCredentials(env http.Header, refs bool) *Credentials {
	c := &Credentials{refs: refs}
	for _, vs := range env {
		for _, v := range vs {
			c.envParts = append(c.envParts, legate.CredentialParts(v)...)
		}
	}
	c.secrets.Store(legate.NewSecrets(c.envParts...))
	return c
}

// Set makes h the resolved headers, their values masked from now on,
// unless err (resolving them failed), which it returns; a nil h (no
// headers to resolve) changes nothing.
func (c *Credentials) Set(h http.Header, err error) error {
	if err != nil || h == nil {
		return err
	}
	parts := slices.Clone(c.envParts)
	for _, vs := range h {
		for _, v := range vs {
			parts = append(parts, legate.CredentialParts(v)...)
		}
	}
	// The masks first: a response may echo a value as soon as a request
	// carries it.
	c.secrets.Store(legate.NewSecrets(parts...))
	c.headers.Store(&h)
	return nil
}

// Headers returns the headers Set last made (nil before).
func (c *Credentials) Headers() http.Header {
	if h := c.headers.Load(); h != nil {
		return *h
	}
	return nil
}

// Secrets returns what is masked now.
func (c *Credentials) Secrets() *legate.Secrets {
	if c == nil {
		return nil
	}
	return c.secrets.Load()
}
