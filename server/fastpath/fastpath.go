// Package fastpath answers the two requests that make most of an agent's
// traffic without the go-sdk server's decoding and encoding
// (docs/BENCHMARKS.md, P1, P2 and P3):
//
//   - tools/list, from the catalog's encoded list (the SDK would encode
//     thousands of definitions twice per request);
//   - tools/call of a native tool, or of a tool an upstream serves over
//     Streamable HTTP. The call takes the gateway's call path like any
//     other, and the upstream's result is relayed as bytes
//     (upstream/relay.go), a native one encoded once (toolresult.Encode).
//
// Both on a live session, or stateless (protocol 2026-07-28, for which the
// SDK would set up a session per request).
//
// The answer is framed as the SDK frames it: an event stream, or for the
// errors protocol 2026-07-28 gives an HTTP status, a JSON body; a stateless
// result names the server in its _meta, as the SDK's do. Anything else, or
// anything unusual — a batch, a cursor, a session this process does not
// know or that another principal opened, a call that policy holds for
// approval (which may ask the user through the SDK: the call path hands it
// back), a call whose result may have a token budget (Paths.Declines) —
// goes to the SDK as usual.
//
// The fast path sees the gateway only through Gateway. docs/ARCHITECTURE.md
// ("Inbound (server)") lists the go-sdk limitations it works around, and
// what change in the SDK would let it go.
package fastpath

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/audit"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/internal/mcpjson"
	"github.com/legate-mcp/legate/opkey"
	"github.com/legate-mcp/legate/paramheader"
	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/server/toolresult"
)

// Gateway is all the fast path needs of the gateway: the caller's tools,
// and the call path. It is this narrow so
// that the fast path stays a bypass of the go-sdk server's decoding and
// encoding and nothing more: every call still takes the one call path
// (policy, approval, limits, audit), and the fast path can go whole once
// the SDK is as cheap. What it buys, measured (docs/BENCHMARKS.md, "What
// changed"): P1 at C=8, 0.56× → 0.70× of direct calls/s and Legate's CPU
// per forwarded call 249 → 143 µs (upstream calls relayed as bytes);
// stateless clients 0.51× → 0.95× of session clients at C=8; P2's
// tools/list of 5,000 tools 85 → 8.0 ms p50 (694 µs now, against 58.6 ms
// for a bare go-sdk server); native calls' CPU (P6) 1,375 → 649 µs at C=8,
// P3 at 1.04× of a bare go-sdk handler.
type Gateway interface {
	// List is the encoded tools/list result p sees on session ss (nil:
	// stateless), once a cold start's wait is over.
	List(ctx context.Context, p *auth.Principal, ss *mcp.ServerSession) []byte
	// Lookup is the entry of the tool p calls name.
	Lookup(p *auth.Principal, name string) (*catalog.Entry, bool)
	// Call takes c along the call path. An upstream's result comes back as
	// the JSON it sent (raw) where it could be relayed as bytes, any other
	// decoded (res); a protocol error to relay is a *jsonrpc.Error. ErrSDK
	// (nothing written yet) gives the request to the SDK: a call the fast
	// path cannot answer, or one policy holds for approval.
	Call(ctx context.Context, c Call) (raw json.RawMessage, res *mcp.CallToolResult, err error)
}

// Call is one tools/call the fast path answers.
type Call struct {
	Entry          *catalog.Entry
	Args           json.RawMessage
	Principal      *auth.Principal    // nil without authentication
	Session        *mcp.ServerSession // nil: stateless
	ProgressToken  any
	IdempotencyKey string
	Round          *rounds.Round // a stateless call's round (its _meta)
	// Relay is the fast path's side of the call: the call path tells it
	// when it keeps the call, and relays an upstream's progress through it.
	Relay Relay
}

// Relay is what the call path sees of the fast path's side of a call it
// relays. The fast path cannot hold a call for approval (which may ask the
// user through the SDK's session), so the policy step hands such a call
// back (ErrSDK) before anything is written, and tells it when it keeps a
// call: from then on the fast path answers it.
type Relay interface {
	// Keep is called when the policy step keeps the call.
	Keep()
	// Progress relays an upstream's progress notification to the client.
	Progress(*mcp.ProgressNotificationParams)
}

// ErrSDK is Gateway.Call's answer for a call the SDK's path takes.
var ErrSDK = errors.New("the SDK's path takes the call")

// Paths answers requests on the fast paths.
type Paths struct {
	gw         Gateway
	sessions   *Sessions
	metrics    *audit.Metrics
	serverInfo json.RawMessage // this server's Implementation, as results of stateless requests carry it
	calls      sync.Map        // callKey → cancel func of a call the fast path runs
	early      sync.Map        // callKey → when a cancellation came for a call not yet registered
	earlyN     atomic.Int64    // entries in early, for its sweep

	// Declines, when set, reports whether a call p makes, whose _meta asks
	// for a result budget or not (asked), may have one
	// (resultcut.Keeper.Declines): the SDK's path takes it, and cuts its
	// result there.
	Declines func(p *auth.Principal, asked bool) bool
}

// New returns the fast paths of gw on sessions, whose MCP server describes
// itself as serverInfo (an mcp.Implementation's JSON).
func New(gw Gateway, sessions *Sessions, metrics *audit.Metrics, serverInfo json.RawMessage) *Paths {
	return &Paths{gw: gw, sessions: sessions, metrics: metrics, serverInfo: serverInfo}
}

// statelessVersion is the first protocol version without sessions.
const statelessVersion = "2026-07-28"

// maxFastBody is the largest request body a fast path reads.
const maxFastBody = 1 << 20

// Serve answers r on a fast path, or reports false (r untouched, its body
// still to read) for the SDK to answer. A request either belongs to a live
// session, or is stateless (2026-07-28).
func (f *Paths) Serve(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	sid, version := r.Header.Get("Mcp-Session-Id"), r.Header.Get("Mcp-Protocol-Version")
	var ss *mcp.ServerSession
	switch {
	case sid == "" && version == statelessVersion:
	case sid == "":
		return false
	default:
		if ss = f.sessions.Session(r.Context(), sid); ss == nil {
			return false
		}
	case version != "" && !fastVersions[version]:
		return false
	}
	if mediaType(r.Header.Get("Content-Type")) != "application/json" || !acceptsBoth(r.Header.Values("Accept")) {
		return false // the SDK's error
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxFastBody+1))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	if err != nil || len(body) > maxFastBody ||
		!bytes.Contains(body, []byte(`"tools/`)) && !bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
		return false
	}
	msg, ok := decodeMessage(body)
	if !ok {
		return false
	}
	if ss == nil {
		// Stateless: a request whose headers and _meta say what the SDK
		// would check (its own answer names anything amiss).
		if !validID(msg.ID) || r.Header.Get("Mcp-Method") != msg.Method || !statelessMeta(msg.Params) {
			return false
		}
		switch msg.Method {
		case "tools/list":
			return f.list(w, r, nil, msg.ID, msg.Params)
		case "tools/call":
			return f.call(w, r, nil, msg.ID, msg.Params)
		}
		return false
	}
	if namesProtocol(msg.Params) {
		return false // the SDK's: it refuses a call naming one (2026-07-28 has no sessions)
	}
	switch msg.Method {
	case "tools/list":
		return validID(msg.ID) && f.list(w, r, ss, msg.ID, msg.Params)
	case "tools/call":
		return validID(msg.ID) && f.call(w, r, ss, msg.ID, msg.Params)
	case "notifications/cancelled":
		f.cancel(sid, msg.Params) // and the SDK acknowledges it as usual
	}
	return false
}

// message is a JSON-RPC message as the fast paths read it.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// decodeMessage reads b as a JSON-RPC 2.0 message, or reports false.
func decodeMessage(b []byte) (msg message, ok bool) {
	return msg, mcpjson.Unmarshal(b, &msg) == nil && msg.JSONRPC == "2.0"
}

// statelessMeta reports whether the _meta of a stateless request's params
// names protocol 2026-07-28 and the client's capabilities.
func statelessMeta(params json.RawMessage) bool {
	var p struct {
		Meta struct {
			Version      string          `json:"io.modelcontextprotocol/protocolVersion"`
			Capabilities json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	}
	return mcpjson.Unmarshal(params, &p) == nil && p.Meta.Version == statelessVersion &&
		len(p.Meta.Capabilities) > 0 && p.Meta.Capabilities[0] == '{'
}

// namesProtocol reports whether params' _meta may name a protocol version
// (a non-empty string under io.modelcontextprotocol/protocolVersion), as a
// 2026-07-28 request's does. It may say so of params the SDK reads
// otherwise (a key in another case, a _meta it cannot read): the SDK then
// answers both ways. A key written with escapes is read as the SDK reads it.
func namesProtocol(params json.RawMessage) bool {
	if !bytes.Contains(params, []byte("protocolVersion")) && bytes.IndexByte(params, '\\') < 0 {
		return false
	}
	var p struct {
		Meta map[string]any `json:"_meta"` // a second _meta adds to the first's keys
	}
	if mcpjson.Unmarshal(params, &p) != nil {
		return true
	}
	v, _ := p.Meta["io.modelcontextprotocol/protocolVersion"].(string)
	return v != ""
}

// fastVersions are the protocol versions of sessions the fast paths serve.
var fastVersions = map[string]bool{"2025-03-26": true, "2025-06-18": true, "2025-11-25": true}

// acceptsBoth reports whether an Accept header takes JSON and event
// streams, as a Streamable HTTP client must (read as the SDK reads it).
func acceptsBoth(values []string) bool {
	var j, s bool
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			switch mediaType(part) {
			case "application/json", "application/*":
				j = true
			case "text/event-stream", "text/*":
				s = true
			case "*/*":
				j, s = true, true
			}
		}
	}
	return j && s
}

// mediaType is the media type of a Content-Type or Accept value, without
// its parameters, in lower case.
func mediaType(v string) string {
	base, _, _ := strings.Cut(v, ";")
	return strings.ToLower(strings.TrimSpace(base))
}

// validID reports whether id is a JSON-RPC request id: a string or a number.
func validID(id json.RawMessage) bool {
	return len(id) > 0 && (id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9')
}

// list answers a plain tools/list from the caller's view of the catalog,
// on live session ss or stateless (nil).
func (f *Paths) list(w http.ResponseWriter, r *http.Request, ss *mcp.ServerSession, id, params json.RawMessage) bool {
	var p struct {
		Cursor string `json:"cursor"`
	}
	if len(params) > 0 && mcpjson.Unmarshal(params, &p) != nil || p.Cursor != "" {
		return false
	}
	list := f.gw.List(r.Context(), auth.PrincipalFromContext(r.Context()), ss)
	out := newStreamWriter(w, r.Header.Get("Mcp-Session-Id"), id)
	if ss == nil {
		out.result(f.statelessList(list)...)
	} else {
		out.result(list)
	}
	f.metrics.FastList.Inc()
	return true
}

// statelessList is the parts of list answering a stateless request, as
// the SDK completes a stateless result: its type and the server's name
// lead the list's own members (it has no _meta).
func (f *Paths) statelessList(list []byte) [][]byte {
	return [][]byte{[]byte(`{"resultType":"complete","_meta":{"` + toolresult.ServerInfoKey + `":`), f.serverInfo, []byte(`},`), list[1:]}
}

// callKey identifies a call the fast path runs, for cancellation: the
// HTTP session's id, or the stdio session itself, and the request's id.
type callKey struct {
	session any
	id      string
}

// errCancelled is the cause of a call the client cancelled.
var errCancelled = errors.New("cancelled by the client")

// callParams are a tools/call's params as the fast path reads them.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      json.RawMessage `json:"_meta"`
}

// newCall reads a tools/call's params into the Call that p makes, or
// reports false for the SDK to answer them: a later round of a
// multi-round-trip call, arguments that are no object, a tool p cannot see.
func (f *Paths) newCall(p *auth.Principal, ss *mcp.ServerSession, params json.RawMessage) (c Call, in callParams, ok bool) {
	if mcpjson.Unmarshal(params, &in) != nil || in.Name == "" {
		return c, in, false
	}
	if bytes.Contains(params, []byte(`"requestState"`)) || bytes.Contains(params, []byte(`"inputResponses"`)) {
		return c, in, false // a later round of a multi-round-trip call (package rounds)
	}
	var meta struct {
		ProgressToken json.RawMessage `json:"progressToken"`
		Key           any             `json:"io.legate/idempotency-key"`      // legate.IdempotencyMetaKey
		Budget        json.RawMessage `json:"io.legate/result-budget-tokens"` // resultcut.MetaKey
	}
	if len(in.Meta) > 0 && mcpjson.Unmarshal(in.Meta, &meta) != nil || f.Declines != nil && f.Declines(p, meta.Budget != nil) {
		return c, in, false
	}
	switch {
	case string(in.Arguments) == "null":
		in.Arguments = nil
	case len(in.Arguments) > 0 && in.Arguments[0] != '{':
		return c, in, false // the SDK's error
	}
	e, ok := f.gw.Lookup(p, in.Name)
	if !ok || e.AppOnly {
		return c, in, false // an app-only tool: the SDK knows whether the client negotiated apps
	}
	c = Call{Entry: e, Args: in.Arguments, Principal: p, Session: ss, IdempotencyKey: opkey.ClientKey(meta.Key)}
	if tok := meta.ProgressToken; validID(tok) {
		c.ProgressToken = tok
	}
	if ss == nil {
		c.Round = &rounds.Round{Meta: in.Meta}
	}
	return c, in, true
}

// call runs a call to a native tool, or to an upstream's tool that can be
// relayed as bytes, on live session ss, or stateless when ss is nil.
func (f *Paths) call(w http.ResponseWriter, r *http.Request, ss *mcp.ServerSession, id, params json.RawMessage) bool {
	c, in, ok := f.newCall(auth.PrincipalFromContext(r.Context()), ss, params)
	if !ok || ss == nil && r.Header.Get("Mcp-Name") != in.Name {
		return false
	}
	out := &streamWriter{w: w, id: id}
	if ss == nil {
		if err := paramheader.Check(r.Header, c.Entry.Tool, c.Args); err != nil {
			out.plainError(http.StatusBadRequest, err)
			return true
		}
	} else {
		out.sid = ss.ID()
	}
	// A session's client cancels with notifications/cancelled; a stateless
	// one by ending its request.
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	if ss != nil {
		key := callKey{out.sid, string(id)}
		f.calls.Store(key, cancel)
		defer f.calls.Delete(key)
		if _, ok := f.early.LoadAndDelete(key); ok {
			f.earlyN.Add(-1)
			cancel(errCancelled) // its cancellation overtook it
		}
	}
	return f.run(ctx, c, out)
}

// answer is where the fast path writes a call's answer: an HTTP event
// stream (streamWriter), or a stdio session's lines (lineWriter).
type answer interface {
	// Progress relays a progress notification ahead of the answer.
	Progress(*mcp.ProgressNotificationParams)
	// result answers with the result whose JSON is the concatenation of parts.
	result(parts ...[]byte)
	// error answers with a JSON-RPC error.
	error(*jsonrpc.Error)
	// plainError answers a stateless request with an error and the HTTP
	// status protocol 2026-07-28 gives it.
	plainError(status int, e *jsonrpc.Error)
	// end ends the exchange with no answer (a cancelled request).
	end()
}

// run takes c along the call path with ctx, whose cause is errCancelled
// once the client cancels, and answers on out; false: nothing was written,
// the SDK takes the call.
func (f *Paths) run(ctx context.Context, c Call, out answer) bool {
	call := &relayedCall{answer: out, metrics: f.metrics}
	c.Relay = call
	b, mres, err := f.gw.Call(ctx, c)
	if err == ErrSDK {
		return false // nothing written: the SDK takes the call
	}
	call.Keep() // if it ended short of the policy step

	var rpcErr *jsonrpc.Error
	switch {
	case context.Cause(ctx) == errCancelled:
		out.end() // no answer to a cancelled request
	case errors.As(err, &rpcErr) && c.Session == nil && statelessErrorStatus(rpcErr.Code) != 0:
		out.plainError(statelessErrorStatus(rpcErr.Code), rpcErr)
	case errors.As(err, &rpcErr):
		out.error(rpcErr)
	default:
		if b == nil {
			if mres == nil {
				mres = &mcp.CallToolResult{}
			}
			if mres.Content == nil && !mres.NeedsInput() {
				mres.Content = []mcp.Content{} // as the SDK sends it
			}
			if c.Session == nil {
				b, err = toolresult.Stateless(mres, f.serverInfo)
			} else {
				b, err = toolresult.Encode(mres)
			}
			if err != nil {
				out.error(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "encoding the result: " + err.Error()})
				return true
			}
		} else if c.Session == nil {
			b = toolresult.MarkStateless(b, f.serverInfo)
		}
		out.result(b)
	}
	return true
}

// relayedCall is the fast path's side of a call it relays: the writer of
// its answer, which it counts once the call path keeps the call.
type relayedCall struct {
	answer
	metrics *audit.Metrics
	counted bool
}

// Keep counts the call as the fast path's, once.
func (c *relayedCall) Keep() {
	if !c.counted {
		c.counted = true
		c.metrics.FastCall.Inc()
	}
}

var _ Relay = (*relayedCall)(nil)

// cancel cancels the fast call a client's notifications/cancelled names
// on session (callKey).
func (f *Paths) cancel(session any, params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if mcpjson.Unmarshal(params, &p) != nil {
		return
	}
	key := callKey{session, string(p.RequestID)}
	if v, ok := f.calls.Load(key); ok {
		v.(context.CancelCauseFunc)(errCancelled)
		return
	}
	// Over HTTP the cancellation comes on a request of its own, which can
	// overtake the call's: it is kept for the call to find (call), then
	// looked for again, in case the call came in between.
	if f.earlyN.Load() >= maxEarly {
		f.sweepEarly()
	}
	if f.earlyN.Load() < maxEarly {
		if _, loaded := f.early.LoadOrStore(key, time.Now()); !loaded {
			f.earlyN.Add(1)
		}
	}
	if v, ok := f.calls.Load(key); ok {
		if _, ok := f.early.LoadAndDelete(key); ok {
			f.earlyN.Add(-1)
		}
		v.(context.CancelCauseFunc)(errCancelled)
	}
}

// maxEarly bounds the cancellations kept for calls not seen (most are of
// calls that had ended, or that the SDK's path ran): past it, those older
// than a minute go, and none is kept until there is room.
const maxEarly = 1024

func (f *Paths) sweepEarly() {
	old := time.Now().Add(-time.Minute)
	f.early.Range(func(k, v any) bool {
		if v.(time.Time).Before(old) {
			if _, ok := f.early.LoadAndDelete(k); ok {
				f.earlyN.Add(-1)
			}
		}
		return true
	})
}

// streamWriter writes a fast path's answer as an event stream: progress
// notifications, then the response.
type streamWriter struct {
	w   http.ResponseWriter
	sid string
	id  json.RawMessage

	mu      sync.Mutex
	started bool
}

func newStreamWriter(w http.ResponseWriter, sid string, id json.RawMessage) *streamWriter {
	return &streamWriter{w: w, sid: sid, id: id}
}

// event writes one message, in parts, as an event, the headers first if
// not yet sent. The parts are written as they are: a list of thousands of
// tools is not copied.
func (s *streamWriter) event(msg ...[]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start()
	io.WriteString(s.w, "event: message\ndata: ")
	for _, m := range msg {
		s.w.Write(m)
	}
	io.WriteString(s.w, "\n\n")
}

func (s *streamWriter) start() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h["Content-Type"] = []string{"text/event-stream"}
	h["Cache-Control"] = []string{"no-cache, no-transform"}
	if s.sid != "" {
		h["Mcp-Session-Id"] = []string{s.sid}
	}
	s.w.WriteHeader(http.StatusOK)
}

// Progress relays one progress notification and flushes it to the client.
func (s *streamWriter) Progress(p *mcp.ProgressNotificationParams) {
	b, err := json.Marshal(p)
	if err != nil {
		return
	}
	s.event([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":`), b, []byte(`}`))
	http.NewResponseController(s.w).Flush()
}

// result answers with the result whose JSON is the concatenation of parts.
func (s *streamWriter) result(parts ...[]byte) {
	msg := append([][]byte{[]byte(`{"jsonrpc":"2.0","id":`), s.id, []byte(`,"result":`)}, parts...)
	s.event(append(msg, []byte(`}`))...)
}

func (s *streamWriter) error(e *jsonrpc.Error) {
	b, _ := json.Marshal(e)
	s.event([]byte(`{"jsonrpc":"2.0","id":`), s.id, []byte(`,"error":`), b, []byte(`}`))
}

// statelessErrorStatus is the HTTP status protocol 2026-07-28 gives a
// response with these JSON-RPC errors (SEP-2575), 0 for others.
func statelessErrorStatus(code int64) int {
	switch code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
		return http.StatusBadRequest
	}
	return 0
}

// plainError answers with a JSON-RPC error as a JSON body and an HTTP
// status, as protocol 2026-07-28 asks for some errors; an event stream
// already under way carries it as an event instead.
func (s *streamWriter) plainError(status int, e *jsonrpc.Error) {
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if started {
		s.error(e)
		return
	}
	b, _ := json.Marshal(e)
	s.w.Header()["Content-Type"] = []string{"application/json"}
	s.w.WriteHeader(status)
	s.w.Write(slices.Concat([]byte(`{"jsonrpc":"2.0","id":`), s.id, []byte(`,"error":`), b, []byte(`}`)))
}

// end ends the stream with no answer.
func (s *streamWriter) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start()
}
