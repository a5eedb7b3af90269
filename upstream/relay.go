package upstream

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/rounds"
)

// A tool call to a Streamable HTTP upstream through a shared session is, on
// the wire, one POST whose answer carries the result. Through the go-sdk
// client, Legate would decode that result into SDK types only for its own
// server side to encode it again (docs/BENCHMARKS.md, P1). relay instead
// sends the request itself, on the session the SDK client opened, and hands
// the result's JSON back unchanged. Everything else about the call stays:
// the concurrency bound, the circuit breaker, the timeout that progress
// restarts, the relay of progress to the client and masking of the
// upstream's credentials.
//
// A shared session declares no client capabilities, so what an upstream may
// send on the call's stream is known: progress and log notifications
// (relayed as the tap relays them) and requests such as ping (answered
// here as the SDK client would answer them).

// Relayed is a result relayed as bytes: its JSON as the upstream sent it
// (with any of the upstream's credentials masked), and what the call path
// needs to know of it, read once as the relay reads the answer.
type Relayed struct {
	JSON json.RawMessage
	// IsError is the result's isError: the tool's own failure.
	IsError bool
	// Size is the size in bytes of its content's text.
	Size int
	// InputRequired is set for a result of type input_required (rounds.go).
	InputRequired bool
}

// relayedOf reads what Relayed holds of a result's JSON, an object.
func relayedOf(raw json.RawMessage) Relayed {
	var sum struct {
		IsError    bool   `json:"isError"`
		ResultType string `json:"resultType"`
		Content    []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	json.Unmarshal(raw, &sum) // another shape of content leaves sum empty
	rel := Relayed{JSON: raw, IsError: sum.IsError, InputRequired: sum.ResultType == "input_required"}
	for _, c := range sum.Content {
		rel.Size += len(c.Text)
	}
	return rel
}

// Relay makes the call and returns its result as the upstream sent it
// (rel.JSON) when the call could be relayed as bytes; otherwise, for an
// upstream or session that cannot be (see relayable), rel.JSON is nil and
// res holds the result decoded by the SDK client.
func (m *Manager) Relay(ctx context.Context, t *Tool, args json.RawMessage, client Client) (rel Relayed, res *mcp.CallToolResult, err error) {
	u, ok := m.Upstream(t.Upstream)
	if !ok {
		return Relayed{}, nil, unavailable(t.Upstream, "no longer configured", nil)
	}
	a, err := u.callRounds(ctx, t, args, client, true)
	return a.rel, a.res, err
}

// Relayable reports whether calls to t are relayed as bytes by Relay: the
// upstream is reached over Streamable HTTP through shared sessions. Calls
// of per_client, stdio and legacy SSE upstreams go through the SDK client,
// which routes the upstream's own requests (sampling, elicitation) to the
// client.
func (m *Manager) Relayable(t *Tool) bool {
	u, ok := m.Upstream(t.Upstream)
	return ok && u.relayable()
}

// Timeout is the time limit of one call to t (its upstream's timeout).
func (m *Manager) Timeout(t *Tool) time.Duration {
	if u, ok := m.Upstream(t.Upstream); ok {
		return u.cfg.timeout()
	}
	return DefaultTimeout
}

func (u *Upstream) relayable() bool {
	return u.cfg.URL != "" && u.cfg.Transport != "sse" && u.cfg.Session != SessionPerClient
}

// relayableOn reports whether a call to t can be relayed on session s:
// from protocol 2026-07-28 a call also carries the tool's declared argument
// headers, which only the SDK client computes.
func (s *session) relayableOn(t *Tool) bool {
	if s.cs.InitializeResult().ProtocolVersion < standardHeadersVersion || t.Def == nil {
		return true
	}
	schema, ok := t.Def.InputSchema.(json.RawMessage)
	return ok && !bytes.Contains(schema, []byte(`"x-mcp-header"`))
}

// standardHeadersVersion is the first protocol version whose requests
// carry Mcp-Method and Mcp-Name headers.
const standardHeadersVersion = "2026-07-28"

// errSessionGone is the upstream's 404 for a session it no longer has.
var errSessionGone = errors.New("upstream session not found")

// relay makes one call on session s within the timeout that each progress
// notification restarts, and returns its result.
func (u *Upstream) relay(ctx context.Context, s *session, name string, args json.RawMessage, client Client) (Relayed, error) {
	c := u.begin(ctx, s, client)
	defer c.end()

	// The token is the request's id as well: unique on the session, and
	// never a number like the SDK client's own ids.
	nameJSON, _ := json.Marshal(name)
	body := make([]byte, 0, len(args)+len(nameJSON)+128)
	body = append(body, `{"jsonrpc":"2.0","id":"`...)
	body = append(body, c.token...)
	body = append(body, `","method":"tools/call","params":{"name":`...)
	body = append(body, nameJSON...)
	body = append(body, `,"arguments":`...)
	body = append(body, args...)
	version, token := s.cs.InitializeResult().ProtocolVersion, c.token
	if client.ProgressToken == nil {
		token = ""
	}
	switch r := client.Round; {
	case u.enveloped(s, client):
		body, version = rounds.AppendParams(body, r.Responses, r.State, r.Meta, token), standardHeadersVersion
	case version >= standardHeadersVersion: // as the SDK client names its protocol
		body = rounds.AppendParams(body, nil, "", rounds.SessionMeta(client.Session), token)
	case client.ProgressToken != nil:
		body = append(body, `,"_meta":{"progressToken":"`...)
		body = append(body, c.token...)
		body = append(body, `"}`...)
	}
	body = append(body, `}}`...)

	resp, err := u.post(c.ctx, s, body, version, "tools/call", name)
	var raw json.RawMessage
	if err == nil {
		raw, err = u.readAnswer(s, resp, `"`+c.token+`"`)
	}
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		if cause := context.Cause(c.ctx); cause != nil {
			// Tell the upstream, as the SDK client does for a call it gives up.
			u.m.wg.Go(func() { u.notifyCancelled(s, c.token, cause) })
		}
		return Relayed{}, c.failed(err)
	}
	// The rest of the stream (normally just its end) is read in the
	// background, for at most a few seconds, or until the manager closes.
	c.timer.Reset(drainTimeout)
	u.m.wg.Go(func() {
		defer context.AfterFunc(u.m.ctx, func() { c.cancel(nil) })()
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		c.timer.Stop()
		c.cancel(nil)
	})
	return relayedOf(raw), nil
}

// drainTimeout bounds how long a response stream may go on after its answer.
const drainTimeout = 5 * time.Second

// post sends one JSON-RPC message on session s; method and name, when set,
// are the request's, for the headers protocol 2026-07-28 asks for.
func (u *Upstream) post(ctx context.Context, s *session, body []byte, version, method, name string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := req.Header
	h["Content-Type"] = []string{"application/json"}
	h["Accept"] = []string{"application/json, text/event-stream"}
	h["Mcp-Protocol-Version"] = []string{version}
	if id := s.cs.ID(); id != "" {
		h["Mcp-Session-Id"] = []string{id}
	}
	if version >= standardHeadersVersion {
		if method != "" {
			h["Mcp-Method"] = []string{method}
		}
		if name != "" {
			h["Mcp-Name"] = []string{name}
		}
	}
	resp, err := cmp.Or(s.hc, u.http).Do(req)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && s.cs.ID() != "":
		drain(resp)
		return nil, errSessionGone
	case resp.StatusCode >= 300:
		// The start of the body names the problem; the upstream may echo
		// its credentials in it.
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		drain(resp)
		snippet = u.secrets.Mask(snippet, len(snippet) == 64<<10)
		// From protocol 2026-07-28 some JSON-RPC errors come with an HTTP
		// status: they are the upstream's answer.
		var answer struct {
			Error *jsonrpc.Error `json:"error"`
		}
		if version >= standardHeadersVersion && resp.StatusCode < 500 && json.Unmarshal(snippet, &answer) == nil && answer.Error != nil {
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

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// readAnswer reads the response to the request with the given id (its
// JSON) from resp: a JSON body, or an event stream that may first carry
// notifications and requests. It returns the result's JSON, or the
// upstream's JSON-RPC error.
func (u *Upstream) readAnswer(s *session, resp *http.Response, id string) (json.RawMessage, error) {
	// Each message is bounded by max_result_bytes: one over it ends the
	// call, and the caller closes the response unread (limit.go).
	max := u.maxResult()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		if resp.ContentLength > max {
			return nil, fmt.Errorf("answer of %d bytes: %w", resp.ContentLength, errTooLarge)
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
		if err != nil {
			return nil, fmt.Errorf("reading the answer: %w", err)
		}
		if int64(len(b)) > max {
			return nil, fmt.Errorf("answer larger than %d bytes: %w", max, errTooLarge)
		}
		raw, done, err := u.handleMessage(s, b, id)
		if err == nil && !done {
			err = errors.New("the upstream's response does not answer the call")
		}
		return raw, err
	case "text/event-stream":
	default:
		return nil, fmt.Errorf("unexpected response Content-Type %q", resp.Header.Get("Content-Type"))
	}
	br := readers.Get().(*bufio.Reader)
	br.Reset(resp.Body)
	defer func() { br.Reset(nil); readers.Put(br) }()
	var ev sseEvent
	var long []byte // a line longer than br's buffer
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if long = append(long, line...); int64(len(long)+len(ev.data)) > max {
				return nil, fmt.Errorf("event larger than %d bytes: %w", max, errTooLarge)
			}
			continue
		}
		if err != nil {
			if err == io.EOF {
				err = errors.New("the stream ended without an answer")
			}
			return nil, fmt.Errorf("reading the answer: %w", err)
		}
		if len(long) > 0 {
			line, long = append(long, line...), long[:0]
		}
		data, ok := ev.line(line[:len(line)-1])
		if int64(len(ev.data)) > max {
			return nil, fmt.Errorf("event larger than %d bytes: %w", max, errTooLarge)
		}
		if !ok {
			continue
		}
		if raw, done, err := u.handleMessage(s, data, id); err != nil || done {
			return raw, err
		}
	}
}

var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}

// handleMessage handles one message on a call's stream: the answer to id
// (done), a notification (relayed), or a request from the upstream
// (answered).
func (u *Upstream) handleMessage(s *session, data []byte, id string) (raw json.RawMessage, done bool, err error) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if err := json.Unmarshal(data, &msg); err != nil {
		return nil, false, fmt.Errorf("malformed message from the upstream: %w", err)
	}
	switch {
	case msg.Method != "" && msg.ID == nil:
		u.tapMessage(s, data)
	case msg.Method != "":
		u.m.wg.Go(func() { u.answerRequest(s, msg.ID, msg.Method, msg.Params, strings.Trim(id, `"`)) })
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
// the given token: a ping; an input request, by the call's client as
// routeAsk does; any other method with "method not found".
func (u *Upstream) answerRequest(s *session, id json.RawMessage, method string, params json.RawMessage, token string) {
	reply := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result,omitempty"`
		Error   *jsonrpc.Error  `json:"error,omitempty"`
	}{JSONRPC: "2.0", ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + method}}
	v, _ := s.inflight.Load(token)
	pc, _ := v.(*pendingCall)
	ir, ok := rounds.ParseInput(method, params)
	switch {
	case method == "ping":
		reply.Result, reply.Error = &struct{}{}, nil
	case ok && pc != nil && (pc.client.ask != nil || pc.client.Session != nil):
		if res, err := rounds.Answer(u.m.ctx, ir, pc.client.ask, pc.ctx, pc.client.Session); err == nil {
			reply.Result, reply.Error = res, nil
		} else {
			reply.Error.Code, reply.Error.Message = jsonrpc.CodeInternalError, err.Error()
		}
	}
	b, _ := json.Marshal(reply)
	u.postNotice(s, b, "")
}

// notifyCancelled tells the upstream that Legate no longer waits for the
// call with this id.
func (u *Upstream) notifyCancelled(s *session, id string, cause error) {
	reason, _ := json.Marshal(errText(cause))
	u.postNotice(s, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"`+id+`","reason":`+string(reason)+`}}`), "notifications/cancelled")
}

// postNotice sends a message that expects no answer, within the connect
// timeout.
func (u *Upstream) postNotice(s *session, body []byte, method string) {
	ctx, cancel := context.WithTimeout(u.m.ctx, u.m.opts.ConnectTimeout)
	defer cancel()
	resp, err := u.post(ctx, s, body, s.cs.InitializeResult().ProtocolVersion, method, "")
	if err != nil {
		u.log.Debug("sending to upstream", "error", err)
		return
	}
	drain(resp)
}
