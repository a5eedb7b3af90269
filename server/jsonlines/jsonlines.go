// Package jsonlines is the server side of MCP's stdio transport:
// newline-delimited JSON-RPC. The go-sdk's stdio transport ends the
// session, and so `legate stdio`, at the first line it cannot decode.
// JSON-RPC 2.0 asks a server to answer such a line instead (-32700 for
// text that is not JSON, -32600 for JSON that is no valid message) and to
// go on serving. Transport reads the stream itself, screens each line,
// answers the bad ones and hands only valid messages to the SDK.
package jsonlines

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLine bounds one inbound message, as the SDK's own stdio
// transport does.
const MaxLine = mcp.DefaultMaxLineLength

// Transport is an mcp.Transport over newline-delimited JSON-RPC.
type Transport struct {
	R   io.Reader
	W   io.Writer
	Log *slog.Logger
	Max int // longest line accepted, in bytes
	// Bypass, when set, is offered each line that holds one message before
	// it is screened for the SDK (server/fastpath's Line). A line it takes
	// (true) is its to answer through out, from any goroutine; until
	// out.Done or out.HandBack the end of input is not reported.
	Bypass func(line []byte, out *Out) bool
}

// Connect starts reading; the connection owns r and w from then on.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{t: t, in: make(chan jsonrpc.Message), closed: make(chan struct{}), done: make(chan error, 1), settled: make(chan struct{}, 1)}
	go c.readLoop()
	return c, nil
}

// lineConn is one Transport connection.
type lineConn struct {
	t       *Transport
	writeMu sync.Mutex
	in      chan jsonrpc.Message // valid messages, in order
	done    chan error           // why reading ended (io.EOF at the end of input)

	batchMu sync.Mutex
	batches map[jsonrpc.ID]*batch // a batch's requests by id, until answered (batch.go)

	openMu   sync.Mutex
	open     map[jsonrpc.ID]bool // requests handed to the session, not yet answered (drain.go)
	bypassed int                 // lines Bypass took, not yet answered or handed back
	settled  chan struct{}       // signalled when one of them is

	closeOnce sync.Once
	closed    chan struct{}
}

func (c *lineConn) readLoop() {
	br := bufio.NewReaderSize(c.t.R, 64<<10)
	for {
		line, tooLong, err := readLine(br, c.t.Max)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			var serr error
			if elems, ok := splitBatch(line, tooLong); ok {
				serr = c.serveBatch(elems)
			} else if !tooLong && c.bypass(line) {
				// taken: answered through its Out
			} else {
				serr = c.serveOne(screenLine(line, tooLong, c.t.Max))
			}
			if serr != nil {
				c.done <- serr
				return
			}
		}
		if err != nil {
			c.done <- err
			return
		}
	}
}

// errConnClosed ends reading when the connection is closed.
var errConnClosed = errors.New("connection closed")

// serveOne passes a valid message on, or answers a malformed one.
func (c *lineConn) serveOne(msg jsonrpc.Message, reply *errorReply) error {
	switch {
	case reply != nil && reply.silent:
		c.t.Log.Info("stdio: dropped a malformed response", "reason", reply.Error.Message)
	case reply != nil:
		c.t.Log.Info("stdio: answered a malformed message", "code", reply.Error.Code, "reason", reply.Error.Message)
		return c.writeLine(reply.encode())
	default:
		return c.pass(msg)
	}
	return nil
}

// pass hands a valid message to the session.
func (c *lineConn) pass(msg jsonrpc.Message) error {
	select {
	case c.in <- msg:
		return nil
	case <-c.closed:
		return errConnClosed
	}
}

// readLine reads one line without its end. A line longer than max is read
// to its end but not kept: tooLong reports it.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.in:
		c.opened(msg)
		return msg, nil
	case err := <-c.done:
		c.done <- err // later reads see it too
		// The end is reported once every request read is answered.
		msg, derr := c.drain(ctx)
		switch {
		case msg != nil: // a bypassed request handed back meanwhile
			c.opened(msg)
			return msg, nil
		case derr != nil:
			return nil, derr
		}
		return nil, err
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, isResp := msg.(*jsonrpc.Response)
	if isResp {
		defer c.answered(resp.ID) // once written, or not to be
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := encode(msg)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	if isResp {
		if all, inBatch := c.answerBatch(resp.ID, b); inBatch {
			if all == nil {
				return nil // the batch still waits for other answers
			}
			b = all
		}
	}
	return c.writeLine(b)
}

// encode is jsonrpc.EncodeMessage(msg). A result the go-sdk answers with
// is its own encoding/json output — valid, compact JSON — which
// EncodeMessage would scan all over again to compact it: an answer with
// such a result (no newline: compact JSON has none) is written here, as
// EncodeMessage writes it.
func encode(msg jsonrpc.Message) ([]byte, error) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error != nil || len(resp.Result) == 0 || bytes.IndexByte(resp.Result, '\n') >= 0 {
		return jsonrpc.EncodeMessage(msg)
	}
	const head, mid = `{"jsonrpc":"2.0","id":`, `,"result":`
	b := make([]byte, 0, len(head)+24+len(mid)+len(resp.Result)+1)
	b = append(b, head...)
	switch id := resp.ID.Raw().(type) {
	case int64:
		b = strconv.AppendInt(b, id, 10)
	case string:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // as the go-sdk encodes messages
		if err := enc.Encode(id); err != nil {
			return nil, err
		}
		b = append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
	default:
		return jsonrpc.EncodeMessage(msg)
	}
	b = append(append(b, mid...), resp.Result...)
	return append(b, '}'), nil
}

// writeLine writes one message and its newline in one write, so that an
// error reply never lands inside another message.
func (c *lineConn) writeLine(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.t.W.Write(append(b, '\n'))
	return err
}

// Close stops reading; a read blocked on the input ends with it when the
// input can be closed.
func (c *lineConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		if rc, ok := c.t.R.(io.Closer); ok {
			err = rc.Close()
		}
	})
	return err
}

func (c *lineConn) SessionID() string { return "" }

// errorReply is a JSON-RPC error response whose id is kept as it was read
// (null when it could not be), so the client can match it exactly.
type errorReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   jsonrpc.Error   `json:"error"`
	// silent is set for a malformed response: answering a response could
	// start an endless exchange of errors with a peer as broken, so it is
	// only logged.
	silent bool
}

func (r *errorReply) encode() []byte {
	b, _ := json.Marshal(r) // cannot fail: ID is valid JSON, the rest strings and numbers
	return b
}

func invalid(id json.RawMessage, format string, args ...any) *errorReply {
	if id == nil {
		id = json.RawMessage("null")
	}
	return &errorReply{JSONRPC: "2.0", ID: id, Error: jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + fmt.Sprintf(format, args...)}}
}

// screenLine checks one line: it returns the message to serve, or the
// error reply to send in its place.
func screenLine(line []byte, tooLong bool, max int) (jsonrpc.Message, *errorReply) {
	if tooLong {
		return nil, invalid(nil, "message larger than %d bytes", max)
	}
	if !json.Valid(line) {
		return nil, &errorReply{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: the line is not JSON"}}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil || obj == nil {
		return nil, invalid(nil, "a message is a JSON object")
	}
	_, hasMethod := obj["method"]
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	reply := func(id json.RawMessage, format string, args ...any) *errorReply {
		r := invalid(id, format, args...)
		r.silent = !hasMethod && (hasResult || hasError)
		return r
	}
	id, hasID := obj["id"]
	if hasID && !validRequestID(id) {
		return nil, reply(nil, "id must be a string or an integer")
	}
	if reason := envelopeProblem(obj, hasID); reason != "" {
		return nil, reply(id, "%s", reason)
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, reply(id, "%v", err)
	}
	return msg, nil
}

// envelopeProblem says what makes obj no request, notification or
// response; "" when nothing does.
func envelopeProblem(obj map[string]json.RawMessage, hasID bool) string {
	if string(obj["jsonrpc"]) != `"2.0"` {
		return `"jsonrpc" must be "2.0"`
	}
	if m, ok := obj["method"]; ok {
		var method string
		if json.Unmarshal(m, &method) != nil || method == "" {
			return `"method" must be a non-empty string`
		}
		if p, ok := obj["params"]; ok && !(p[0] == '{' || p[0] == '[' || string(p) == "null") {
			return `"params" must be an object or an array`
		}
		return ""
	}
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	switch {
	case !hasID:
		return `a request needs a "method"; a response an "id"`
	case hasResult == hasError:
		return `a response has either a "result" or an "error"`
	}
	return ""
}

// validRequestID reports whether id is one the SDK keeps exactly: a string
// or an integer a float64 holds without loss (the SDK decodes numbers as
// float64 and answers with the integer).
func validRequestID(id json.RawMessage) bool {
	switch id[0] {
	case '"':
		var s string
		return json.Unmarshal(id, &s) == nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		n, err := strconv.ParseInt(string(id), 10, 64)
		return err == nil && n >= -(1<<53) && n <= 1<<53
	}
	return false
}

var _ mcp.Transport = (*Transport)(nil)
var _ mcp.Connection = (*lineConn)(nil)
