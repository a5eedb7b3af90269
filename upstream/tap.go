package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/legate-mcp/legate/upstream/msglimit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The go-sdk client hands a call's response to the caller as soon as it is
// read, but runs notification handlers later, on a queue of their own: the
// progress and log notifications an upstream sends just before its answer
// would reach the client after the answer. So Legate relays them from the
// wire itself: a tap on the byte stream (a stdio upstream's stdout, a
// Streamable HTTP response's event stream) relays each such notification,
// in order, before the SDK is given the bytes that follow it. The SDK's own
// handlers then leave them alone.

// tapMessage relays one inbound JSON-RPC message if it is a progress or log
// notification; s is the session it arrived on, nil if unknown.
func (u *Upstream) tapMessage(s *session, raw []byte) {
	if !bytes.Contains(raw, []byte(`"notifications/`)) {
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if masked, ok := u.secrets.DecodedLeak(raw); ok {
		raw = masked // a secret in a mix of escapes (mask.go)
	}
	if json.Unmarshal(raw, &msg) != nil || msg.ID != nil {
		return
	}
	switch msg.Method {
	case "notifications/progress":
		var p mcp.ProgressNotificationParams
		if json.Unmarshal(msg.Params, &p) == nil {
			u.relayProgress(&p)
		}
	case "notifications/message":
		var p mcp.LoggingMessageParams
		if json.Unmarshal(msg.Params, &p) == nil {
			u.relayLog(s, &p)
		}
	}
}

// relayLog sends an upstream's log message to the client its session
// serves, on a call's response stream when one is under way.
func (u *Upstream) relayLog(s *session, p *mcp.LoggingMessageParams) {
	if s != nil && s.owner != nil {
		s.owner.Log(s.callContext(context.Background()), p)
		return
	}
	u.log.Debug("upstream log", "level", p.Level, "data", p.Data)
}

// lineTap relays the notifications in a newline-delimited JSON stream
// (stdio) before passing the bytes on.
type lineTap struct {
	r    io.ReadCloser
	each func([]byte)
	buf  []byte
}

func (t *lineTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	data := p[:n]
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			t.buf = append(t.buf, data...) // a line continued in the next read
			break
		}
		if len(t.buf) > 0 {
			t.buf = append(t.buf, data[:i]...)
			t.each(t.buf)
			t.buf = t.buf[:0]
		} else {
			t.each(data[:i])
		}
		data = data[i+1:]
	}
	return n, err
}

func (t *lineTap) Close() error { return t.r.Close() }

// sseTap relays the notifications in a server-sent event stream before
// passing the bytes on.
type sseTap struct {
	lineTap
	ev sseEvent
}

func newSSETap(r io.ReadCloser, each func([]byte)) *sseTap {
	t := &sseTap{}
	t.lineTap = lineTap{r: r, each: func(line []byte) {
		if data, ok := t.ev.line(line); ok {
			each(data)
		}
	}}
	return t
}

// sseEvent gathers the data of one server-sent event, line by line.
type sseEvent struct{ data []byte }

// line takes the next line of the stream, without its "\n". When the line
// ends an event that has data, it returns that data, valid until the next
// call.
func (e *sseEvent) line(line []byte) ([]byte, bool) {
	line = bytes.TrimSuffix(line, []byte("\r"))
	switch {
	case len(line) == 0: // the event ends
		if len(e.data) > 0 {
			data := e.data
			e.data = e.data[:0]
			return data, true
		}
	case bytes.HasPrefix(line, []byte("data:")):
		if len(e.data) > 0 {
			e.data = append(e.data, '\n')
		}
		e.data = append(e.data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
	}
	return nil, false
}

// tapTransport taps the event streams of one upstream's HTTP responses;
// the session is the transport's own (legacy SSE) or found by the
// request's Mcp-Session-Id.
type tapTransport struct {
	base    http.RoundTripper
	u       *Upstream
	session *session
}

func (t *tapTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	s := t.session
	if s == nil {
		s = t.u.sessionByID(r.Header.Get("Mcp-Session-Id"))
	}
	resp.Body = newSSETap(resp.Body, func(raw []byte) { t.u.tapMessage(s, raw) })
	return resp, nil
}

// sessionByID finds a session by its Mcp-Session-Id.
func (u *Upstream) sessionByID(id string) *session {
	if id == "" {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, s := range u.shared {
		if s.cs != nil && s.cs.ID() == id {
			return s
		}
	}
	for _, s := range u.perClient {
		if s.cs != nil && s.cs.ID() == id {
			return s
		}
	}
	return nil
}

// stdioTransport runs a stdio upstream with its stdout tapped. Closing it
// closes the child's stdin, waits for it to exit, then sends SIGTERM and
// finally SIGKILL, as the MCP specification asks.
type stdioTransport struct {
	cmd *exec.Cmd
	tap func([]byte)
	max int64 // max_result_bytes: the longest line kept (limit.go)
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", t.cmd.Path, err)
	}
	w := &childStdin{WriteCloser: stdin, cmd: t.cmd}
	out := &lineTap{r: msglimit.NewLineReader(stdout, t.max), each: t.tap}
	return (&mcp.IOTransport{Reader: out, Writer: w, MaxLineLength: int(min(t.max+64<<10, math.MaxInt32))}).Connect(ctx)
}

// childStdin ends the child when the connection closes.
type childStdin struct {
	io.WriteCloser
	cmd  *exec.Cmd
	once sync.Once
	err  error
}

func (c *childStdin) Close() error {
	c.once.Do(func() {
		c.WriteCloser.Close()
		done := make(chan error, 1)
		go func() { done <- c.cmd.Wait() }()
		for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
			if sig != 0 {
				c.cmd.Process.Signal(sig)
			}
			select {
			case err := <-done:
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					err = nil // an exit status after we asked it to stop is no failure
				}
				c.err = err
				return
			case <-time.After(2 * time.Second):
			}
		}
		c.err = fmt.Errorf("upstream process %d does not exit", c.cmd.Process.Pid)
	})
	return c.err
}
