// Package relay is the fast path of a tool call to a Streamable HTTP
// upstream, and the tap that relays an upstream's notifications in wire
// order. Both work around the go-sdk client (docs/ARCHITECTURE.md,
// "Outbound (upstream)").
//
// A tool call to a Streamable HTTP upstream through a shared session is, on
// the wire, one POST whose answer carries the result. Through the go-sdk
// client, Legate would decode that result into SDK types only for its own
// server side to encode it again (docs/BENCHMARKS.md, P1). The relay instead
// sends the request itself, on the session the SDK client opened, and hands
// the result's JSON back unchanged. Everything else about the call stays in
// package upstream: the concurrency bound, the circuit breaker, the timeout
// that progress restarts, the relay of progress to the client and masking of
// the upstream's credentials.
//
// What an upstream may send on the call's stream besides its answer is
// known: progress and log notifications (relayed as the tap relays them),
// ping (answered here as the SDK client would answer it), and the input
// requests a shared session's capabilities allow (elicitation, sampling,
// roots), which the call's client answers (Peer.Ask). A client of protocol
// 2026-07-28 answers them by retrying its request: ReadAnswer then stops at
// the first (Asked), and the call is read on by the goroutine that holds
// it while the client is asked.
package relay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/internal/mcpjson"
	"github.com/legate-mcp/legate/upstream/msglimit"
)

// Relayed is a result relayed as bytes: its JSON as the upstream sent it
// (with any of the upstream's credentials masked), and what the call path
// needs to know of it, read once as the relay reads the answer.
type Relayed struct {
	JSON json.RawMessage
	// IsError is the result's isError: the tool's own failure.
	IsError bool
	// Size is the size in bytes of its content's text.
	Size int
	// InputRequired is set for a result of type input_required (package
	// rounds), or one that asks for input without a resultType.
	InputRequired bool
	// Task is set for a result of type task: the upstream's own task
	// (the tasks extension, SEP-2663), for a request that declared it.
	Task bool
}

// Of reads what Relayed holds of a result's JSON, an object.
func Of(raw json.RawMessage) Relayed {
	var sum struct {
		IsError       bool            `json:"isError"`
		ResultType    string          `json:"resultType"`
		InputRequests json.RawMessage `json:"inputRequests"`
		Content       []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	json.Unmarshal(raw, &sum) // another shape of content leaves sum empty
	// The go-sdk's server leaves the resultType of a session of an earlier
	// protocol unset, and may still ask for input by its result.
	rel := Relayed{JSON: raw, IsError: sum.IsError, InputRequired: sum.ResultType == "input_required" || sum.ResultType == "" && len(sum.InputRequests) > 0,
		Task: sum.ResultType == "task"}
	for _, c := range sum.Content {
		rel.Size += len(c.Text)
	}
	return rel
}

// CallRequest starts the JSON of a tools/call of tool name with args,
// whose id is token (a string): its params are left open for what a round
// or a _meta adds, and the closing "}}".
func CallRequest(token, name string, args json.RawMessage) []byte {
	nameJSON, _ := json.Marshal(name)
	body := make([]byte, 0, len(args)+len(nameJSON)+128)
	body = append(body, `{"jsonrpc":"2.0","id":"`...)
	body = append(body, token...)
	body = append(body, `","method":"tools/call","params":{"name":`...)
	body = append(body, nameJSON...)
	body = append(body, `,"arguments":`...)
	return append(body, args...)
}

// Peer is the one thing the relay needs of package upstream: what to do
// with the messages an upstream sends on a call's stream besides its
// answer. It is the whole boundary of the fast path, which is kept for
// what it buys in docs/BENCHMARKS.md (P1, "What changed": relaying a call
// as bytes took Legate's throughput at C=8 from 0.56x to 0.70x of direct,
// its added p50 at C=1 from +315 to +190 µs, its CPU per forwarded call at
// C=8 from 249 µs, 0.92x the upstream's, to 143 µs, 0.52x; P1 now holds
// 0.56-0.59x the upstream's CPU and 0.94-1.00x the calls/s of a plain
// reverse proxy).
type Peer interface {
	// Notify relays a notification (progress, a log message) the upstream
	// sent during a call, as the tap does.
	Notify(raw []byte)
	// Ask answers a request the upstream sent during the call whose
	// request id is token, by asking that call's client; ok is false when
	// the request is no input request or the call has no client to ask.
	Ask(token, method string, params json.RawMessage) (res any, ok bool, err error)
}

// Conn sends JSON-RPC messages on one upstream session the go-sdk client
// opened and keeps.
type Conn struct {
	// URL is the upstream's endpoint and HTTP the client of the session
	// (the upstream's own, or a principal's).
	URL  string
	HTTP *http.Client
	// Session is the go-sdk client's session: its id and protocol version.
	Session *mcp.ClientSession
	// Secrets are the upstream's credentials, masked in its HTTP errors.
	Secrets *legate.Secrets
	// Max is the upstream's max_result_bytes, the bound of one message.
	Max  int64
	Peer Peer
	Log  *slog.Logger
	// Go runs f in the background, counted so that closing the manager
	// waits for it; Life ends as the manager closes. A message that
	// expects no answer is sent within Life and NoticeTimeout; a reply to
	// the upstream's request, within NoticeTimeout.
	Go            func(f func())
	Life          context.Context
	NoticeTimeout time.Duration
}

// StandardHeadersVersion is the first protocol version whose requests
// carry Mcp-Method and Mcp-Name headers.
const StandardHeadersVersion = "2026-07-28"

// ErrSessionGone is the upstream's 404 for a session it no longer has.
var ErrSessionGone = errors.New("upstream session not found")

// Version is the protocol version the session negotiated.
func (c *Conn) Version() string { return c.Session.InitializeResult().ProtocolVersion }

// DrainTimeout bounds how long a response stream may go on after its answer.
const DrainTimeout = 5 * time.Second

// Post sends one JSON-RPC message on the session; method and name, when
// set, are the request's, for the headers protocol 2026-07-28 asks for.
func (c *Conn) Post(ctx context.Context, body []byte, version, method, name string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := req.Header
	h["Content-Type"] = []string{"application/json"}
	h["Accept"] = []string{"application/json, text/event-stream"}
	h["Mcp-Protocol-Version"] = []string{version}
	if replayable(ctx) {
		h[replayHeader] = nil
	}
	if id := c.Session.ID(); id != "" {
		h["Mcp-Session-Id"] = []string{id}
	}
	if version >= StandardHeadersVersion {
		if method != "" {
			h["Mcp-Method"] = []string{method}
		}
		if name != "" {
			h["Mcp-Name"] = []string{name}
		}
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && c.Session.ID() != "":
		Drain(resp)
		return nil, ErrSessionGone
	case resp.StatusCode >= 300:
		// The start of the body names the problem; the upstream may echo
		// its credentials in it.
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		Drain(resp)
		snippet = c.Secrets.Mask(snippet, len(snippet) == 64<<10)
		// From protocol 2026-07-28 some JSON-RPC errors come with an HTTP
		// status: they are the upstream's answer.
		var answer struct {
			Error *jsonrpc.Error `json:"error"`
		}
		if version >= StandardHeadersVersion && resp.StatusCode < 500 && mcpjson.Unmarshal(snippet, &answer) == nil && answer.Error != nil {
			return nil, answer.Error
		}
		snippet = snippet[:min(len(snippet), 512)]
		return nil, &httpError{status: resp.StatusCode, body: strings.TrimSpace(string(snippet))}
	}
	return resp, nil
}

// httpError is an upstream's HTTP failure.
type httpError struct {
	status int
	body   string
}

func (e *httpError) Error() string {
	if e.body == "" {
		return fmt.Sprintf("HTTP %d", e.status)
	}
	return fmt.Sprintf("HTTP %d: %s", e.status, e.body)
}

// Drain reads what is left of a response's body, up to 64 KiB, so that its
// connection can be reused, and closes it.
func Drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// ReadAnswer reads the response to the request with the given id (its
// JSON) from resp: a JSON body, or an event stream that may first carry
// notifications and requests. It returns the result's JSON, or the
// upstream's JSON-RPC error. With hold set, a request of the upstream (but
// a ping) stops the reading: ReadAnswer returns an *Asked, which reads on.
func (c *Conn) ReadAnswer(resp *http.Response, id string, hold bool) (json.RawMessage, error) {
	// Each message is bounded by max_result_bytes: one over it ends the
	// call, and the caller closes the response unread.
	max := c.Max
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		if resp.ContentLength > max {
			return nil, fmt.Errorf("answer of %d bytes: %w", resp.ContentLength, msglimit.ErrTooLarge)
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
		if err != nil {
			return nil, fmt.Errorf("reading the answer: %w", err)
		}
		if int64(len(b)) > max {
			return nil, fmt.Errorf("answer larger than %d bytes: %w", max, msglimit.ErrTooLarge)
		}
		raw, done, err := c.handleMessage(b, id, false)
		if err == nil && !done {
			err = errors.New("the upstream's response does not answer the call")
		}
		return raw, err
	case "text/event-stream":
	default:
		return nil, fmt.Errorf("unexpected response Content-Type %q", resp.Header.Get("Content-Type"))
	}
	s := stream{c: c, br: readers.Get().(*bufio.Reader), id: id, hold: hold}
	s.br.Reset(resp.Body)
	raw, err := s.read()
	if _, asked := err.(*Asked); !asked {
		s.release()
	}
	return raw, err
}

// stream is the reading of a call's event stream.
type stream struct {
	c    *Conn
	br   *bufio.Reader
	ev   sseEvent
	long []byte // a line longer than br's buffer
	id   string
	hold bool
}

// read reads up to the answer, handling the messages before it.
func (s *stream) read() (json.RawMessage, error) {
	max := s.c.Max
	for {
		line, err := s.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if s.long = append(s.long, line...); int64(len(s.long)+len(s.ev.data)) > max {
				return nil, fmt.Errorf("event larger than %d bytes: %w", max, msglimit.ErrTooLarge)
			}
			continue
		}
		if err != nil {
			if err == io.EOF {
				err = errors.New("the stream ended without an answer")
			}
			return nil, fmt.Errorf("reading the answer: %w", err)
		}
		if len(s.long) > 0 {
			line, s.long = append(s.long, line...), s.long[:0]
		}
		data, ok := s.ev.line(line[:len(line)-1])
		if int64(len(s.ev.data)) > max {
			return nil, fmt.Errorf("event larger than %d bytes: %w", max, msglimit.ErrTooLarge)
		}
		if !ok {
			continue
		}
		raw, done, err := s.c.handleMessage(data, s.id, s.hold)
		if err == errAsked {
			return nil, &Asked{s: *s, request: bytes.Clone(data)}
		}
		if err != nil || done {
			return raw, err
		}
	}
}

// release gives the stream's reader back.
func (s *stream) release() {
	s.br.Reset(nil)
	readers.Put(s.br)
}

// errAsked stops a stream read with hold at the upstream's request.
var errAsked = errors.New("the upstream asks before it answers")

// Asked is ReadAnswer's error, with hold set, when the upstream sends a
// request before its answer, as a 2025-era server asks its client for
// input in the middle of a call: the call goes on, its stream read by
// Read, in the goroutine that is to wait for it.
type Asked struct {
	s       stream
	request []byte // the request that stopped the reading, not yet handled
}

func (a *Asked) Error() string { return errAsked.Error() }

// Read handles the request that stopped the stream, then reads on as
// ReadAnswer does (without hold) and returns what it returns. The caller
// still closes the response.
func (a *Asked) Read() (json.RawMessage, error) {
	defer a.s.release()
	if raw, done, err := a.s.c.handleMessage(a.request, a.s.id, false); err != nil || done {
		return raw, err
	}
	a.s.hold = false
	return a.s.read()
}

var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}

// handleMessage handles one message on a call's stream: the answer to id
// (done), a notification (relayed), or a request from the upstream
// (answered; with hold, errAsked unless a ping).
func (c *Conn) handleMessage(data []byte, id string, hold bool) (raw json.RawMessage, done bool, err error) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if err := mcpjson.Unmarshal(data, &msg); err != nil {
		return nil, false, fmt.Errorf("malformed message from the upstream: %w", err)
	}
	switch {
	case msg.Method != "" && msg.ID == nil:
		c.Peer.Notify(data)
	case msg.Method != "" && hold && msg.Method != "ping":
		return nil, false, errAsked
	case msg.Method != "":
		c.Go(func() { c.answerRequest(msg.ID, msg.Method, msg.Params, strings.Trim(id, `"`)) })
	case string(msg.ID) != id:
		// An answer to another request: not this stream's business.
	case msg.Error != nil:
		return nil, true, msg.Error
	case len(msg.Result) == 0 || msg.Result[0] != '{':
		return nil, true, errors.New("the upstream's answer has no result object")
	default:
		return msg.Result, true, nil
	}
	return nil, false, nil
}

// answerRequest answers a request the upstream sent during the call with
// the given token: a ping; an input request, by the call's client (Peer);
// any other method with "method not found".
func (c *Conn) answerRequest(id json.RawMessage, method string, params json.RawMessage, token string) {
	reply := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result,omitempty"`
		Error   *jsonrpc.Error  `json:"error,omitempty"`
	}{JSONRPC: "2.0", ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + method}}
	if method == "ping" {
		reply.Result, reply.Error = &struct{}{}, nil
	} else if res, ok, err := c.Peer.Ask(token, method, params); ok && err == nil {
		reply.Result, reply.Error = res, nil
	} else if ok {
		reply.Error.Code, reply.Error.Message = jsonrpc.CodeInternalError, err.Error()
	}
	b, _ := json.Marshal(reply)
	// Sent even as Life ends (a held call's client gone with it): the
	// upstream's handler waits for it, and its session's close with it.
	c.postNotice(context.WithoutCancel(c.Life), b, "")
}

// NotifyCancelled tells the upstream that Legate no longer waits for the
// call with this id.
func (c *Conn) NotifyCancelled(id string, cause error) {
	reason, _ := json.Marshal(cause.Error())
	c.postNotice(c.Life, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"`+id+`","reason":`+string(reason)+`}}`), "notifications/cancelled")
}

// postNotice sends a message that expects no answer, within life and
// NoticeTimeout.
func (c *Conn) postNotice(life context.Context, body []byte, method string) {
	ctx, cancel := context.WithTimeout(life, c.NoticeTimeout)
	defer cancel()
	resp, err := c.Post(ctx, body, c.Version(), method, "")
	if err != nil {
		c.Log.Debug("sending to upstream", "error", err)
		return
	}
	Drain(resp)
}
