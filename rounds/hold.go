package rounds

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Held calls. A 2025-era upstream asks for input in the middle of a call,
// by a request on its session, which a client of protocol 2026-07-28 (it
// has no session) cannot receive. Legate holds the call — the upstream's
// request waiting for its answer, the call waiting for its result — and
// answers the client input_required, with a request state naming the held
// call (HeldState). The client's retry brings the answer, which goes to
// the upstream, and waits again, for the call's result or its next
// request. A call no retry reaches within the holder's time-to-live is
// ended: its pending requests fail and the call is cancelled. A Holder
// holds at most a fixed number of calls; a call past it is refused input.

// ErrHeldFull is the error an upstream's request gets when the holder is
// full: the upstream's tool fails, the client may try again later.
var ErrHeldFull = errors.New("too many calls waiting for a client's input")

// MaxHeld and HeldTTL are the usual bounds of a Holder: how many calls,
// and how long each waits for the client's retry.
const (
	MaxHeld = 1024
	HeldTTL = 10 * time.Minute
)

// heldPrefix starts the request state of a held call.
const heldPrefix = "legate-held:"

// Holder keeps the calls that wait for a client's input.
type Holder struct {
	mu    sync.Mutex
	calls map[string]*Held
	max   int
	ttl   time.Duration
	run   func(func())
}

// NewHolder returns a Holder of at most max calls, each ended when no
// retry reaches it within ttl. run starts the goroutine of each call, so
// that the Holder's owner can wait for them (a WaitGroup's Go); nil starts
// it with no one waiting.
func NewHolder(max int, ttl time.Duration, run func(func())) *Holder {
	if run == nil {
		run = func(f func()) { go f() }
	}
	return &Holder{calls: map[string]*Held{}, max: max, ttl: ttl, run: run}
}

// Held is one call whose upstream may ask for input while it runs.
type Held struct {
	h      *Holder
	id     string
	asks   chan *ask
	done   chan result
	cancel func()

	mu      sync.Mutex
	pending map[string]*ask // asked and not answered, by input request key
	n       int
	held    bool // in the holder's table
	timer   *time.Timer
}

type ask struct {
	req   mcp.InputRequest
	reply chan json.RawMessage
}

type result struct {
	res any
	err error
}

// Start runs call (with a context of its own, cancelled when the held call
// ends, and Ask, which the upstream's requests during the call go to) for
// a client that answers input requests by retrying. Its result is the
// caller's to read (Wait).
func (h *Holder) Start(call func(ctx context.Context, ask func(context.Context, mcp.InputRequest) (json.RawMessage, error)) (any, error)) *Held {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Held{h: h, asks: make(chan *ask), done: make(chan result, 1), cancel: cancel, pending: map[string]*ask{}}
	b := make([]byte, 16)
	rand.Read(b)
	c.id = base64.RawURLEncoding.EncodeToString(b)
	h.run(func() {
		res, err := call(ctx, c.Ask)
		// Out of the table before its result can be read: a retry's state
		// read after the result names no call waiting for input.
		c.end()
		c.done <- result{res, err}
	})
	return c
}

// Resume returns the held call a retry's state (the upstream's state as
// Legate sealed it) names, and whether the state names one at all.
func (h *Holder) Resume(state string) (*Held, bool, error) {
	id, ok := strings.CutPrefix(state, heldPrefix)
	if !ok {
		return nil, false, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.calls[id]
	if !ok {
		return nil, true, fmt.Errorf("%w: the call no longer waits for input", ErrState)
	}
	return c, true, nil
}

// Ask is the upstream's request ir in the middle of the call: it waits for
// the client's answer, which it returns as the client sent it.
func (c *Held) Ask(ctx context.Context, ir mcp.InputRequest) (json.RawMessage, error) {
	a := &ask{req: ir, reply: make(chan json.RawMessage, 1)}
	select {
	case c.asks <- a:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case raw, ok := <-a.reply:
		if !ok {
			return nil, errors.New("the client did not answer in time")
		}
		return raw, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Answer hands the client's answers (inputResponses, a JSON object) to the
// requests they answer.
func (c *Held) Answer(responses json.RawMessage) {
	var by map[string]json.RawMessage
	json.Unmarshal(responses, &by)
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, raw := range by {
		if a, ok := c.pending[key]; ok {
			a.reply <- raw
			delete(c.pending, key)
		}
	}
}

// Wait waits for the call's result (what the call returned), or for the
// upstream's next requests: then the result is a *mcp.CallToolResult of
// type input_required, asking for them under the held call's state. When
// ctx ends first, a call that asked for input stays held for a retry;
// another is ended.
func (c *Held) Wait(ctx context.Context) (any, error) {
	for {
		c.mu.Lock()
		waiting := len(c.pending) > 0
		c.mu.Unlock()
		if !waiting {
			select {
			case r := <-c.done:
				return r.res, r.err
			case a := <-c.asks:
				if err := c.hold(a); err != nil {
					return nil, err
				}
			case <-ctx.Done():
				c.mu.Lock()
				held := c.held
				c.mu.Unlock()
				if !held { // no retry can come back to it
					c.end()
				}
				return nil, ctx.Err()
			}
		}
		c.gather()
		c.mu.Lock()
		if len(c.pending) == 0 { // the call ended meanwhile: its result
			c.mu.Unlock()
			continue
		}
		reqs := make(map[string]mcp.InputRequest, len(c.pending))
		for key, a := range c.pending {
			reqs[key] = a.req
		}
		c.timer.Reset(c.h.ttl)
		c.mu.Unlock()
		return InputRequired(reqs, heldPrefix+c.id)
	}
}

// Gather is how long a held call's round waits for the upstream's next
// request after one: an upstream that asks for several things at once (the
// go-sdk's server asks a client of a 2025 protocol for every input a
// multi-round result requests, in parallel) sends them one by one, each
// within moments of the one before, and the client is to get them in one
// round. A round gathers for at most MaxGather.
const (
	Gather    = 100 * time.Millisecond
	MaxGather = 10 * Gather
)

// gather holds the requests that come within Gather of each other.
func (c *Held) gather() {
	quiet, stop := time.NewTimer(Gather), time.NewTimer(MaxGather)
	defer quiet.Stop()
	defer stop.Stop()
	for {
		select {
		case a := <-c.asks:
			c.hold(a)
			quiet.Reset(Gather)
		case <-quiet.C:
			return
		case <-stop.C:
			return
		}
	}
}

// JSON is the JSON of a held request's result v: as the upstream sent it
// (a json.RawMessage), or encoded (an input_required result of Wait).
func JSON(v any) json.RawMessage {
	if raw, ok := v.(json.RawMessage); ok {
		return raw
	}
	raw, _ := json.Marshal(v)
	return raw
}

// IsHeld reports whether a request state (the upstream's, as Legate
// sealed it) names a held call.
func IsHeld(state string) bool { return strings.HasPrefix(state, heldPrefix) }

// hold records a and puts the call in the holder's table, if not yet.
func (c *Held) hold(a *ask) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.held {
		c.h.mu.Lock()
		full := len(c.h.calls) >= c.h.max
		if !full {
			c.h.calls[c.id] = c
		}
		c.h.mu.Unlock()
		if full {
			close(a.reply)
			c.cancel()
			return ErrHeldFull
		}
		c.held = true
		c.timer = time.AfterFunc(MaxGather+c.h.ttl, c.end) // the round gathers, then Wait restarts it
	}
	c.n++
	c.pending[fmt.Sprintf("input-%d", c.n)] = a
	return nil
}

// end ends the call: out of the table, its pending requests failed, the
// call cancelled.
func (c *Held) end() {
	c.mu.Lock() // before the table's, as hold takes them: no Wait sees the call out of the table with requests pending
	c.h.mu.Lock()
	delete(c.h.calls, c.id)
	c.h.mu.Unlock()
	for key, a := range c.pending {
		close(a.reply)
		delete(c.pending, key)
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
	c.cancel()
}

// InputRequired is a result of type input_required asking for reqs under
// state.
func InputRequired(reqs map[string]mcp.InputRequest, state string) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(map[string]any{"resultType": "input_required", "inputRequests": mcp.InputRequestMap(reqs), "requestState": state})
	if err != nil {
		return nil, err
	}
	var res mcp.CallToolResult
	err = json.Unmarshal(b, &res)
	res.Content = nil // as the SDK's servers send it: no content
	return &res, err
}

// InputOf is the input request an upstream's request is, if it is one.
func InputOf(req mcp.Request) (mcp.InputRequest, bool) {
	switch r := req.(type) {
	case *mcp.ElicitRequest:
		return r.Params, true
	case *mcp.CreateMessageRequest:
		return r.Params, true
	case *mcp.CreateMessageWithToolsRequest:
		return r.Params, true
	case *mcp.ListRootsRequest:
		return r.Params, true
	}
	return nil, false
}

// ResultOf decodes a client's answer raw to ir as the result an
// upstream's request expects.
func ResultOf(ir mcp.InputRequest, raw json.RawMessage) (mcp.Result, error) {
	var res mcp.Result
	switch ir.(type) {
	case *mcp.ElicitParams:
		res = &mcp.ElicitResult{}
	case *mcp.CreateMessageParams:
		res = &mcp.CreateMessageResult{}
	case *mcp.CreateMessageWithToolsParams:
		res = &mcp.CreateMessageWithToolsResult{}
	case *mcp.ListRootsParams:
		res = &mcp.ListRootsResult{}
	default:
		return nil, fmt.Errorf("unknown input request %T", ir)
	}
	return res, json.Unmarshal(raw, res)
}

// Answer answers an upstream's request ir in the middle of a call: with ask
// (a held call's) when set; else by asking the client of ss, which has a
// session, on the call's context, callCtx.
func Answer(ctx context.Context, ir mcp.InputRequest, ask func(context.Context, mcp.InputRequest) (json.RawMessage, error), callCtx context.Context, ss *mcp.ServerSession) (mcp.Result, error) {
	if ask == nil {
		return AskSession(callCtx, ss, ir)
	}
	raw, err := ask(ctx, ir)
	if err != nil {
		return nil, err
	}
	return ResultOf(ir, raw)
}

// ParseInput is the input request an upstream sent as a JSON-RPC request
// with method and params, if it is one.
func ParseInput(method string, params json.RawMessage) (mcp.InputRequest, bool) {
	var ir mcp.InputRequest
	switch method {
	case "elicitation/create":
		ir = &mcp.ElicitParams{}
	case "sampling/createMessage":
		ir = &mcp.CreateMessageParams{}
	case "roots/list":
		ir = &mcp.ListRootsParams{}
	default:
		return nil, false
	}
	return ir, json.Unmarshal(params, ir) == nil
}
