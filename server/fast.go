package server

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

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/audit"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/opkey"
	"github.com/legate-mcp/legate/paramheader"
	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/server/toolresult"
)

// The fast paths answer the two requests that make most of an agent's
// traffic without the go-sdk server's decoding and encoding
// (docs/BENCHMARKS.md, P1 and P2):
//
//   - tools/list, from the catalog's encoded list (the SDK would encode
//     thousands of definitions twice per request);
//   - tools/call of a tool an upstream serves over Streamable HTTP. The
//     call takes the call path (Gateway.run) like any other, and the
//     upstream's result is relayed as bytes (upstream/relay.go).
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
// back) — goes to the SDK as usual.

// fastPath answers requests on the fast paths. It reaches the gateway only
// through callPath: the caller's view of the catalog and the call path.
type fastPath struct {
	cold  *coldStart // held by the first tools/list after a cold start
	gw    callPath
	lists interface {
		ListJSON(*auth.Principal, *mcp.ServerSession) []byte
	} // tools/list by discovery mode
	metrics *audit.Metrics
	idle    time.Duration // HTTP sessions' idle timeout

	// Set once the MCP server is built (newMCPServer):
	mcp        *mcp.Server
	serverInfo json.RawMessage // this server's Implementation, as results of stateless requests carry it

	live    sync.Map // HTTP session id → *liveSession
	tracked atomic.Int64
	calls   sync.Map // fastKey → cancel func of a call the fast path runs
}

// callPath is what the fast path needs of the gateway.
type callPath interface {
	// viewFor is the catalog p sees (nil: no authentication).
	viewFor(p *auth.Principal) *catalog.Catalog
	// fastable reports whether the fast path can answer call r.
	fastable(r *Request) bool
	// newRequest starts a call to e.
	newRequest(e *catalog.Entry, args json.RawMessage, o CallOptions) *Request
	// run takes r along the call path: with r.relay set, it hands back
	// (errHandBack) a call that needs approval.
	run(ctx context.Context, r *Request) (*Result, error)
}

var _ callPath = (*Gateway)(nil)

// liveSession is what the fast paths know of an HTTP session the SDK holds.
type liveSession struct {
	ss *mcp.ServerSession
	// opened is when the session was initialized; owner who opened it
	// (sessionOwner): a session answers only them, and the admin API
	// lists it under them.
	opened time.Time
	owner  string
	// seen is when the SDK last handled one of the session's requests (Unix
	// nanoseconds). The SDK closes a session no request reached for
	// session_idle_timeout, and the fast paths' requests do not reach it; so
	// a session the SDK has not seen for a sixteenth of that goes to the SDK.
	seen atomic.Int64
}

// maxFastBody is the largest request body a fast path reads.
const maxFastBody = 1 << 20

// liveSession returns the session sid of this process, nil if unknown.
func (f *fastPath) liveSession(sid string) *liveSession {
	if sid == "" {
		return nil
	}
	v, ok := f.live.Load(sid)
	if !ok {
		return nil
	}
	return v.(*liveSession)
}

// serveFast answers r on a fast path, or reports false (r untouched, its
// body still to read) for the SDK to answer. A request either belongs to a
// live session, or is stateless (2026-07-28).
func (f *fastPath) serveFast(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	sid, version := r.Header.Get("Mcp-Session-Id"), r.Header.Get("Mcp-Protocol-Version")
	ls := f.liveSession(sid)
	switch {
	case sid == "" && version == statelessVersion:
	case ls == nil || ls.owner != userOf(r.Context()) || time.Since(time.Unix(0, ls.seen.Load())) > f.idle/16:
		return false
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
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.JSONRPC != "2.0" {
		return false
	}
	if ls == nil {
		// Stateless: a request whose headers and _meta say what the SDK
		// would check (its own answer names anything amiss).
		if !validID(msg.ID) || r.Header.Get("Mcp-Method") != msg.Method || !statelessMeta(msg.Params) {
			return false
		}
		switch msg.Method {
		case "tools/list":
			return f.fastList(w, r, nil, msg.ID, msg.Params)
		case "tools/call":
			return f.fastCall(w, r, nil, msg.ID, msg.Params)
		}
		return false
	}
	switch msg.Method {
	case "tools/list":
		return validID(msg.ID) && f.fastList(w, r, ls, msg.ID, msg.Params)
	case "tools/call":
		return validID(msg.ID) && f.fastCall(w, r, ls, msg.ID, msg.Params)
	case "notifications/cancelled":
		f.cancelFast(sid, msg.Params) // and the SDK acknowledges it as usual
	}
	return false
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
	return json.Unmarshal(params, &p) == nil && p.Meta.Version == statelessVersion &&
		len(p.Meta.Capabilities) > 0 && p.Meta.Capabilities[0] == '{'
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

// fastList answers a plain tools/list from the caller's view of the
// catalog, on live session ls or stateless (nil).
func (f *fastPath) fastList(w http.ResponseWriter, r *http.Request, ls *liveSession, id, params json.RawMessage) bool {
	var p struct {
		Cursor string `json:"cursor"`
	}
	if len(params) > 0 && json.Unmarshal(params, &p) != nil || p.Cursor != "" {
		return false
	}
	f.cold.wait(r.Context())
	var ss *mcp.ServerSession
	if ls != nil {
		ss = ls.ss
	}
	list := f.lists.ListJSON(auth.PrincipalFromContext(r.Context()), ss)
	out := newStreamWriter(w, r.Header.Get("Mcp-Session-Id"), id)
	if ss == nil {
		// As the SDK completes a stateless result: its type and the server's
		// name lead the list's own members (it has no _meta).
		out.result([]byte(`{"resultType":"complete","_meta":{"`+toolresult.ServerInfoKey+`":`), f.serverInfo, []byte(`},`), list[1:])
	} else {
		out.result(list)
	}
	f.metrics.FastList.Inc()
	return true
}

// fastKey identifies a call the fast path runs, for cancellation.
type fastKey struct{ session, id string }

// errCancelled is the cause of a call the client cancelled.
var errCancelled = errors.New("cancelled by the client")

// fastCall runs a call to a native tool, or to an upstream's tool that can
// be relayed as bytes, on live session ls, or stateless when ls is nil.
func (f *fastPath) fastCall(w http.ResponseWriter, r *http.Request, ls *liveSession, id, params json.RawMessage) bool {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || p.Name == "" || ls == nil && r.Header.Get("Mcp-Name") != p.Name {
		return false
	}
	if bytes.Contains(params, []byte(`"requestState"`)) || bytes.Contains(params, []byte(`"inputResponses"`)) {
		return false // a later round of a multi-round-trip call (mrtr.go)
	}
	var meta struct {
		ProgressToken json.RawMessage `json:"progressToken"`
		Key           any             `json:"io.legate/idempotency-key"` // legate.IdempotencyMetaKey
	}
	if len(p.Meta) > 0 && json.Unmarshal(p.Meta, &meta) != nil {
		return false
	}
	switch {
	case string(p.Arguments) == "null":
		p.Arguments = nil
	case len(p.Arguments) > 0 && p.Arguments[0] != '{':
		return false // the SDK's error
	}
	principal := auth.PrincipalFromContext(r.Context())
	e, ok := f.gw.viewFor(principal).Lookup(p.Name)
	if !ok {
		return false
	}
	if ls == nil {
		if err := paramheader.Check(r.Header, e.Tool, p.Arguments); err != nil {
			newStreamWriter(w, "", id).plainError(http.StatusBadRequest, err)
			return true
		}
	}
	o := CallOptions{Principal: principal, IdempotencyKey: opkey.ClientKey(meta.Key)}
	sid := ""
	if ls != nil {
		sid, o.Session = ls.ss.ID(), ls.ss
		o.Caller.Session = sid
	}
	if tok := meta.ProgressToken; validID(tok) {
		o.ProgressToken = tok
	}
	if ls == nil {
		o.round = &rounds.Round{Meta: p.Meta}
	}
	req := f.gw.newRequest(e, p.Arguments, o)
	if !f.gw.fastable(req) {
		return false
	}
	call := &relayedCall{streamWriter: streamWriter{w: w, sid: sid, id: id}, metrics: f.metrics}
	out := &call.streamWriter
	req.relay = call

	// A session's client cancels with notifications/cancelled; a stateless
	// one by ending its request.
	ctx, cancel := context.WithCancelCause(r.Context())
	if sid != "" {
		key := fastKey{sid, string(id)}
		f.calls.Store(key, cancel)
		defer f.calls.Delete(key)
	}
	res, err := f.gw.run(ctx, req)
	cancel(nil)
	if err == errHandBack {
		return false // nothing written: the SDK takes the call
	}
	call.keep() // if it ended short of the policy step

	var rpcErr *jsonrpc.Error
	switch {
	case context.Cause(ctx) == errCancelled:
		out.end() // no answer to a cancelled request
	case errors.As(err, &rpcErr) && ls == nil && statelessErrorStatus(rpcErr.Code) != 0:
		out.plainError(statelessErrorStatus(rpcErr.Code), rpcErr)
	case errors.As(err, &rpcErr):
		out.error(rpcErr)
	default:
		var b []byte
		var mres *mcp.CallToolResult
		if res != nil {
			b, mres = res.Raw, res.MCP
		}
		if b == nil {
			if mres == nil {
				mres = &mcp.CallToolResult{}
			}
			if mres.Content == nil && !mres.NeedsInput() {
				mres.Content = []mcp.Content{} // as the SDK sends it
			}
			if ls == nil {
				b, err = toolresult.Stateless(mres, f.serverInfo)
			} else {
				b, err = toolresult.Encode(mres)
			}
			if err != nil {
				out.error(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "encoding the result: " + err.Error()})
				return true
			}
		} else if ls == nil {
			b = toolresult.MarkStateless(b, f.serverInfo)
		}
		out.result(b)
	}
	return true
}

// relayedCall is the fast path's side of a call it relays: the writer of
// its answer, which it counts once the call path keeps the call.
type relayedCall struct {
	streamWriter
	metrics *audit.Metrics
	counted bool
}

func (c *relayedCall) keep() {
	if !c.counted {
		c.counted = true
		c.metrics.FastCall.Inc()
	}
}

var _ relayer = (*relayedCall)(nil)

// cancelFast cancels the fast call a client's notifications/cancelled names.
func (f *fastPath) cancelFast(sid string, params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	if v, ok := f.calls.Load(fastKey{sid, string(p.RequestID)}); ok {
		v.(context.CancelCauseFunc)(errCancelled)
	}
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

// progress relays one progress notification and flushes it to the client.
func (s *streamWriter) progress(p *mcp.ProgressNotificationParams) {
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

// serveSDK has the SDK answer a request of live session ls, noting that
// the SDK saw the session, or that it no longer has it.
func (f *fastPath) serveSDK(h http.Handler, w http.ResponseWriter, r *http.Request, sid string, ls *liveSession) {
	ls.seen.Store(time.Now().UnixNano())
	sw := &statusWriter{ResponseWriter: w}
	h.ServeHTTP(sw, r)
	if sw.status == http.StatusNotFound || r.Method == http.MethodDelete && sw.status < 300 {
		f.live.Delete(sid)
	}
}

// statusWriter records the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// userOf is the identity of a request's credential (sessionOwner), ""
// without auth: a session answers only the one that opened it, as the
// SDK's sessions do.
func userOf(ctx context.Context) string {
	if ti := sdkauth.TokenInfoFromContext(ctx); ti != nil {
		return ti.UserID
	}
	return ""
}

// trackSession records an initialized session, and who opened it, for the
// fast paths. Entries of ended sessions are pruned as new ones come,
// without a goroutine per session.
func (f *fastPath) trackSession(ctx context.Context, req *mcp.InitializedRequest) {
	id := req.Session.ID()
	if id == "" {
		return // stateless: no session to answer for
	}
	// ctx is the request that carried notifications/initialized, which the
	// SDK let through only with the credential that opened the session.
	ls := &liveSession{ss: req.Session, opened: time.Now(), owner: userOf(ctx)}
	ls.seen.Store(time.Now().UnixNano())
	f.live.Store(id, ls)
	if f.tracked.Add(1)%256 == 0 {
		alive := map[string]bool{}
		for ss := range f.mcp.Sessions() {
			alive[ss.ID()] = true
		}
		f.live.Range(func(k, _ any) bool {
			if !alive[k.(string)] {
				f.live.Delete(k)
			}
			return true
		})
	}
}
