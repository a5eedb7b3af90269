// Package msglimit bounds each JSON-RPC message read from an upstream MCP
// server, so that a huge result is cut off as it arrives instead of being
// held whole. The go-sdk client reads a whole message before Legate sees
// it, so its HTTP responses (Transport) and a stdio upstream's output
// (NewLineReader) pass through a limiter first. A message over the limit
// is replaced by a JSON-RPC error answering the same request (IsTooLarge
// recognizes it); over HTTP the response is closed unread, while a stdio
// upstream's line is read through without being kept, the pipe being the
// session.
package msglimit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/legate-mcp/legate"
)

// codeTooLarge and msgTooLarge make the JSON-RPC error put in place of a
// message over the limit.
const (
	codeTooLarge = -32090
	msgTooLarge  = "legate: the upstream's message is over max_result_bytes"
)

// ErrTooLarge is the read error of a message over the limit that answers
// no request it can tell.
var ErrTooLarge = errors.New("message over max_result_bytes")

// IsTooLarge reports whether err says a message was over the limit: the
// read error, or the error put in place of the message.
func IsTooLarge(err error) bool {
	var rpcErr *jsonrpc.Error
	return errors.Is(err, ErrTooLarge) || errors.As(err, &rpcErr) && rpcErr.Code == codeTooLarge && rpcErr.Message == msgTooLarge
}

// Transport bounds each message of the HTTP responses base returns to max
// bytes: a JSON body, or each event of an event stream.
func Transport(base http.RoundTripper, max int64) http.RoundTripper {
	return &limitTransport{base: base, max: max}
}

// NewLineReader bounds each line (one message) of r to max bytes.
func NewLineReader(r io.ReadCloser, max int64) io.ReadCloser { return newLineLimit(r, max) }

// tooLargeAnswer is the error response put in place of a message over the
// limit that answers request id.
func tooLargeAnswer(id json.RawMessage) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, codeTooLarge, msgTooLarge)
}

// limitTransport bounds each message of the go-sdk client's HTTP
// responses: a JSON body, or each event of an event stream.
type limitTransport struct {
	base http.RoundTripper
	max  int64
}

func (t *limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		resp.Body = &jsonLimit{body: resp.Body, req: r, max: t.max, size: resp.ContentLength}
	case "text/event-stream":
		resp.Body = &sseLimit{body: resp.Body, br: bufio.NewReaderSize(resp.Body, 32<<10), req: r, max: t.max}
	default:
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(resp.Body, t.max), resp.Body}
	}
	return resp, nil
}

// jsonLimit is a JSON response body read whole up to the limit.
type jsonLimit struct {
	body io.ReadCloser
	req  *http.Request
	max  int64
	size int64 // the announced length, -1 if unknown

	buf  *bytes.Reader
	fail error
}

func (j *jsonLimit) Read(p []byte) (int, error) {
	if j.buf == nil && j.fail == nil {
		j.fill()
	}
	if j.fail != nil {
		return 0, j.fail
	}
	return j.buf.Read(p)
}

func (j *jsonLimit) fill() {
	var b []byte
	if j.size <= j.max {
		var err error
		if b, err = io.ReadAll(io.LimitReader(j.body, j.max+1)); err != nil {
			j.fail = err
			return
		}
		if int64(len(b)) <= j.max {
			j.buf = bytes.NewReader(b)
			return
		}
	}
	j.body.Close() // the rest is never read
	id := answeredID(b)
	if id == nil {
		id = requestID(j.req)
	}
	if id == nil {
		j.fail = ErrTooLarge
		return
	}
	j.buf = bytes.NewReader(tooLargeAnswer(id))
}

func (j *jsonLimit) Close() error { return j.body.Close() }

// sseLimit is an event stream passed on event by event, each held whole up
// to the limit. An event over it ends a response's stream; the stream a GET
// opened (the legacy transport's only one, which the session lives on)
// goes on after the event, read through without being kept.
type sseLimit struct {
	body     io.ReadCloser
	br       *bufio.Reader
	req      *http.Request
	max      int64
	skipping bool // reading through an event over the limit

	ev      []byte // the event being read
	midLine bool   // the last read ended inside a long line
	out     []byte // what Read hands on next
	done    error  // set once the stream ends
}

func (s *sseLimit) Read(p []byte) (int, error) {
	for len(s.out) == 0 && s.done == nil {
		s.next()
	}
	if len(s.out) == 0 {
		return 0, s.done
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

// next reads one more line of the stream.
func (s *sseLimit) next() {
	line, err := s.br.ReadSlice('\n')
	startOfLine := !s.midLine
	s.midLine = errors.Is(err, bufio.ErrBufferFull)
	ends := err == nil && startOfLine && len(bytes.TrimRight(line, "\r\n")) == 0
	if s.skipping {
		s.skipping = !ends
		if err != nil && !s.midLine {
			s.done = err
		}
		return
	}
	s.ev = append(s.ev, line...)
	switch {
	case int64(len(s.ev)) > s.max && s.req.Method == http.MethodGet:
		s.out, s.ev, s.skipping = s.replacement(), nil, !ends
	case int64(len(s.ev)) > s.max:
		s.body.Close() // the rest is never read
		s.out, s.done = s.replacement(), io.EOF
	case ends:
		s.out, s.ev = s.ev, nil
	case err != nil && !s.midLine:
		s.out, s.done = s.ev, err
	}
}

// replacement is the event put in place of one over the limit: the error
// answering its request, or nothing when that cannot be known.
func (s *sseLimit) replacement() []byte {
	var data []byte
	for line := range bytes.Lines(s.ev) {
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(d, []byte(" "))...)
		}
	}
	id := answeredID(data)
	if id == nil {
		id = requestID(s.req)
	}
	if id == nil {
		return nil
	}
	return fmt.Appendf(nil, "event: message\ndata: %s\n\n", tooLargeAnswer(id))
}

func (s *sseLimit) Close() error { return s.body.Close() }

// requestID is the id of the JSON-RPC request r posts, nil for none: the
// response to a call answers it.
func requestID(r *http.Request) json.RawMessage {
	if r.Method != http.MethodPost || r.GetBody == nil {
		return nil
	}
	body, err := r.GetBody()
	if err != nil {
		return nil
	}
	defer body.Close()
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.NewDecoder(body).Decode(&msg) != nil || msg.Method == "" {
		return nil
	}
	return validID(msg.ID)
}

// answeredID is the id of the response whose start is b, if b shows one.
func answeredID(b []byte) json.RawMessage {
	var s memberScan
	s.feed(b)
	return s.answered()
}

// validID returns id if it is a JSON-RPC request id, else nil.
func validID(id json.RawMessage) json.RawMessage {
	id = bytes.TrimSpace(id)
	if len(id) == 0 || !json.Valid(id) || id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9') {
		return nil
	}
	return id
}

// lineLimit bounds each line of a stdio upstream's output. A line over
// the limit is read through but not kept, and replaced by the error
// answering its request when its id shows.
type lineLimit struct {
	r   *bufio.Reader
	c   io.Closer
	max int64

	out  []byte
	done error
}

func newLineLimit(r io.ReadCloser, max int64) *lineLimit {
	return &lineLimit{r: bufio.NewReaderSize(r, 32<<10), c: r, max: max}
}

func (l *lineLimit) Read(p []byte) (int, error) {
	for len(l.out) == 0 && l.done == nil {
		l.out, l.done = l.line()
	}
	if len(l.out) == 0 {
		return 0, l.done
	}
	n := copy(p, l.out)
	l.out = l.out[n:]
	return n, nil
}

// line reads the next line: whole, or its replacement when over the limit.
func (l *lineLimit) line() ([]byte, error) {
	var kept []byte
	var scan *memberScan
	for {
		chunk, err := l.r.ReadSlice('\n')
		switch {
		case scan != nil:
			scan.feed(chunk)
		case int64(len(kept)+len(chunk)) > l.max:
			scan = &memberScan{}
			scan.feed(kept)
			scan.feed(chunk)
			kept = nil
		default:
			kept = append(kept, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if scan == nil {
			return kept, err
		}
		if id := scan.answered(); id != nil {
			return append(tooLargeAnswer(id), '\n'), err
		}
		return nil, err // no id to answer: the line is dropped
	}
}

func (l *lineLimit) Close() error { return l.c.Close() }

// memberScan follows a JSON object as it streams past, without keeping
// it, to learn the members that make it a response: its top-level "id",
// and whether it has a "method" (a request) or a "result" or "error".
type memberScan struct {
	depth     int
	inString  bool
	escaped   bool
	wantKey   bool   // at depth 1, the next string is a member's name
	inKey     bool   // reading that name
	key       []byte // the name read (its first bytes)
	capture   bool   // reading the value of "id"
	id        []byte
	badID     bool
	method    bool
	responded bool
}

// maxIDLen bounds an id kept by memberScan.
const maxIDLen = 256

func (s *memberScan) feed(b []byte) {
	for _, c := range b {
		s.byte(c)
	}
}

func (s *memberScan) byte(c byte) {
	if s.capture && s.depth == 1 && (s.inString || c > ' ' && c != ',' && c != '}') {
		s.id = append(s.id, c)
		s.badID = s.badID || len(s.id) > maxIDLen
	}
	if s.inString {
		switch {
		case s.escaped:
			s.escaped = false
		case c == '\\':
			s.escaped = true
		case c == '"':
			s.inString, s.inKey = false, false
			return
		}
		if s.inKey && len(s.key) < 16 {
			s.key = append(s.key, c)
		}
		return
	}
	switch c {
	case '"':
		s.inString = true
		if s.depth == 1 && s.wantKey {
			s.inKey, s.wantKey, s.key = true, false, s.key[:0]
		}
	case '{', '[':
		s.depth++
		if s.depth == 1 {
			s.wantKey = true
		} else if s.capture && s.depth == 2 {
			s.badID = true // an object or array is no id
		}
	case '}', ']':
		if s.depth == 1 {
			s.capture = false
		}
		s.depth--
	case ':':
		if s.depth == 1 {
			s.member(string(s.key))
		}
	case ',':
		if s.depth == 1 {
			s.capture, s.wantKey = false, true
		}
	}
}

// member notes the member whose value starts.
func (s *memberScan) member(name string) {
	switch name {
	case "id":
		s.capture, s.id, s.badID = true, s.id[:0], false
	case "method":
		s.method = true
	case "result", "error":
		s.responded = true
	}
}

// answered is the id of the response scanned, nil if it shows none.
func (s *memberScan) answered() json.RawMessage {
	if s.method || !s.responded || s.badID {
		return nil
	}
	return validID(s.id)
}

var (
	_ http.RoundTripper = (*limitTransport)(nil)
	_ io.ReadCloser     = (*jsonLimit)(nil)
	_ io.ReadCloser     = (*sseLimit)(nil)
	_ io.ReadCloser     = (*lineLimit)(nil)
)

// ToolError is the error of a call to the tool canonical whose answer was
// over max, the max_result_bytes of upstream id.
func ToolError(canonical string, max int64, id string, err error) error {
	return &legate.Error{Code: legate.CodeAdapterMapping, Err: err, Message: fmt.Sprintf(
		"the result of %s is larger than %d bytes, the max_result_bytes of upstream %s: ask for less (a smaller page, a narrower query), or an operator may raise max_result_bytes",
		canonical, max, id)}
}
