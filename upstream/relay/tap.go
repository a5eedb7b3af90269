package relay

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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/internal/mcpjson"
	"github.com/legate-mcp/legate/upstream/msglimit"
)

// The go-sdk client hands a call's response to the caller as soon as it is
// read, but runs notification handlers later, on a queue of their own: the
// progress and log notifications an upstream sends just before its answer
// would reach the client after the answer. So Legate relays them from the
// wire itself: a tap on the byte stream (a stdio upstream's stdout, a
// Streamable HTTP response's event stream) relays each such notification,
// in order, before the SDK is given the bytes that follow it. The SDK's own
// handlers then leave them alone.

// Notification reads raw, an inbound JSON-RPC message, as a progress or
// log notification, with any of secrets spelled in a mix of escapes
// masked; both are nil for any other message.
func Notification(raw []byte, secrets *legate.Secrets) (*mcp.ProgressNotificationParams, *mcp.LoggingMessageParams) {
	if !bytes.Contains(raw, []byte(`"notifications/`)) {
		return nil, nil
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if masked, ok := secrets.DecodedLeak(raw); ok {
		raw = masked
	}
	if mcpjson.Unmarshal(raw, &msg) != nil || msg.ID != nil {
		return nil, nil
	}
	switch msg.Method {
	case "notifications/progress":
		var p mcp.ProgressNotificationParams
		if mcpjson.Unmarshal(msg.Params, &p) == nil {
			return &p, nil
		}
	case "notifications/message":
		var p mcp.LoggingMessageParams
		if mcpjson.Unmarshal(msg.Params, &p) == nil {
			return nil, &p
		}
	}
	return nil, nil
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

// TapTransport taps the event streams of one upstream's HTTP responses:
// Tap gives, for the request of each, where its messages go (the
// session's notifications: the transport's own session, for legacy SSE,
// or the one the request's Mcp-Session-Id names).
type TapTransport struct {
	Base http.RoundTripper
	Tap  func(r *http.Request) func(raw []byte)
}

func (t *TapTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.Base.RoundTrip(r)
	if err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	resp.Body = newSSETap(resp.Body, t.Tap(r))
	return resp, nil
}

// StdioTransport runs a stdio upstream with its stdout tapped. Closing it
// closes the child's stdin, waits for it to exit, then sends SIGTERM and
// finally SIGKILL, as the MCP specification asks.
type StdioTransport struct {
	Cmd *exec.Cmd
	Tap func([]byte)
	Max int64 // max_result_bytes: the longest line kept (package msglimit)
}

func (t *StdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.Cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.Cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.Cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", t.Cmd.Path, err)
	}
	w := &childStdin{WriteCloser: stdin, cmd: t.Cmd}
	out := &lineTap{r: msglimit.NewLineReader(stdout, t.Max), each: t.Tap}
	return (&mcp.IOTransport{Reader: out, Writer: w, MaxLineLength: int(min(t.Max+64<<10, math.MaxInt32))}).Connect(ctx)
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
