package upstream

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/upstream/relay"
	"github.com/legate-mcp/legate/upstream/upconfig"
)

// A tool call to a Streamable HTTP upstream through a shared session is
// relayed as bytes (package relay): the call path here keeps the
// concurrency bound, the circuit breaker, the timeout that progress
// restarts, the relay of progress to the client and masking of the
// upstream's credentials, and the relay sends the request and reads its
// answer on the session the SDK client opened.

// Relayed is a result relayed as bytes (relay.Relayed).
type Relayed = relay.Relayed

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
		return u.cfg.CallTimeout()
	}
	return upconfig.DefaultTimeout
}

func (u *Upstream) relayable() bool {
	return u.streamable() && u.cfg.Session != SessionPerClient
}

// streamable reports whether u is served over Streamable HTTP.
func (u *Upstream) streamable() bool { return u.cfg.URL != "" && u.cfg.Transport != "sse" }

// relayableOn reports whether a call to t can be relayed on session s:
// from protocol 2026-07-28 a call also carries the tool's declared argument
// headers, which only the SDK client computes.
func (s *session) relayableOn(t *Tool) bool {
	if s.cs.InitializeResult().ProtocolVersion < relay.StandardHeadersVersion || t.Def == nil {
		return true
	}
	schema, ok := t.Def.InputSchema.(json.RawMessage)
	return ok && !bytes.Contains(schema, []byte(`"x-mcp-header"`))
}

// relay makes one call on session s within the timeout that each progress
// notification restarts, and returns its result.
func (u *Upstream) relay(ctx context.Context, s *session, name string, args json.RawMessage, client Client) (answer, error) {
	c := u.begin(ctx, s, client)
	// The token is the request's id as well: unique on the session, and
	// never a number like the SDK client's own ids.
	body := relay.CallRequest(c.token, name, args)
	version, token := s.cs.InitializeResult().ProtocolVersion, c.token
	if client.ProgressToken == nil {
		token = ""
	}
	switch r := client.Round; {
	case u.enveloped(s, client):
		body, version = rounds.AppendParams(body, r.Responses, r.State, rounds.Meta(r.Meta, token, false, client.Tasks)), relay.StandardHeadersVersion
	case version >= relay.StandardHeadersVersion: // as the SDK client names its protocol
		body = rounds.AppendParams(body, nil, "", rounds.Meta(rounds.SessionMeta(client.Session), token, false, false))
	case r != nil: // a 2026-07-28 client's call on a session of an earlier protocol
		body = rounds.AppendParams(body, r.Responses, r.State, rounds.Meta(r.Meta, token, true, false))
	case client.ProgressToken != nil:
		body = append(body, `,"_meta":{"progressToken":"`...)
		body = append(body, c.token...)
		body = append(body, `"}`...)
	}
	body = append(body, `}}`...)
	// Held for a client that answers by retrying (a 2025-11-25 client's
	// rounds, callRounds, carry its session, asked mid-call).
	raw, held, err := u.send(ctx, s, c, body, version, "tools/call", name, client.Round != nil && client.Session == nil)
	if raw == nil {
		return heldAnswer(held), err
	}
	return answer{rel: relay.Of(raw)}, nil
}

// send sends body, the request of call c on session s, and reads its
// answer (raw). With hold, a call whose upstream asks for input before it
// answers is held (rounds.Holder), read on by another goroutine, and its
// client gets input_required (held): only such a call pays the hand-off.
func (u *Upstream) send(ctx context.Context, s *session, c *call, body []byte, version, method, name string, hold bool) (raw json.RawMessage, held any, err error) {
	resp, err := s.conn.Post(c.ctx, body, version, method, name)
	if err == nil {
		raw, err = s.conn.ReadAnswer(resp, `"`+c.token+`"`, hold)
	}
	asked, ok := err.(*relay.Asked)
	if !ok {
		defer c.end()
		if err = u.finish(s, c, resp, err); err != nil {
			return nil, nil, err
		}
		return raw, nil, nil
	}
	c.stop() // it outlives this round's request
	h := u.m.held.Start(func(held context.Context, ask func(context.Context, mcp.InputRequest) (json.RawMessage, error)) (any, error) {
		defer c.end()
		defer context.AfterFunc(held, func() { c.cancel(context.Canceled) })()
		defer context.AfterFunc(u.m.ctx, func() { c.cancel(context.Canceled) })() // Close waits for it
		if v, ok := s.inflight.Load(c.token); ok {
			// The upstream's requests go to ask; the first round's
			// response, where progress went, is over.
			pc := *v.(*pendingCall)
			pc.client.ask, pc.client.ProgressToken, pc.client.Progress = ask, nil, nil
			u.calls.Store(c.token, &pc)
			s.inflight.Store(c.token, &pc)
		}
		raw, err := asked.Read()
		return raw, u.finish(s, c, resp, err)
	})
	held, err = h.Wait(ctx)
	return nil, held, err
}

// finish ends call c on session s, whose response resp (nil if none) gave
// its answer or err.
func (u *Upstream) finish(s *session, c *call, resp *http.Response, err error) error {
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		if cause := context.Cause(c.ctx); cause != nil {
			// Tell the upstream, as the SDK client does for a call it gives up.
			u.m.wg.Go(func() { s.conn.NotifyCancelled(c.token, cause) })
		}
		return c.failed(err)
	}
	// The rest of the stream (normally just its end) is read in the
	// background, for at most a few seconds, or until the manager closes.
	c.timer.Reset(relay.DrainTimeout)
	u.m.wg.Go(func() {
		defer context.AfterFunc(u.m.ctx, func() { c.cancel(nil) })()
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		c.timer.Stop()
		c.cancel(nil)
	})
	return nil
}

// conn is the relay's connection on session s, once its go-sdk client
// session is connected; hc is the session's HTTP client (nil: the
// upstream's own).
func (u *Upstream) conn(s *session, hc *http.Client) *relay.Conn {
	return s.tasks.Over(&relay.Conn{
		URL: u.cfg.URL, HTTP: cmp.Or(hc, u.http), Session: s.cs, Secrets: u.creds.Secrets(), Max: u.maxResult(),
		Peer: peer{u, s}, Log: u.log, Go: u.m.wg.Go, Life: u.m.ctx, NoticeTimeout: u.m.opts.ConnectTimeout,
	})
}

// peer hands the relay's messages of session s back to its upstream.
type peer struct {
	u *Upstream
	s *session
}

func (p peer) Notify(raw []byte) { p.u.tapMessage(p.s, raw) }

// Ask answers an input request by the call's client, as routeAsk does.
func (p peer) Ask(token, method string, params json.RawMessage) (any, bool, error) {
	v, _ := p.s.inflight.Load(token)
	pc, _ := v.(*pendingCall)
	ir, ok := rounds.ParseInput(method, params)
	if !ok || pc == nil || pc.client.ask == nil && pc.client.Session == nil {
		return nil, false, nil
	}
	res, err := rounds.Answer(p.u.m.ctx, ir, pc.client.ask, pc.ctx, pc.client.Session)
	return res, true, err
}

// tap is where the messages of a tapped event stream go: to session s, or,
// when s is nil, to the session the request's Mcp-Session-Id names.
func (u *Upstream) tap(s *session) func(r *http.Request) func([]byte) {
	return func(r *http.Request) func([]byte) {
		to := s
		if to == nil {
			to = u.pool.sessionByID(r.Header.Get("Mcp-Session-Id"))
		}
		return func(raw []byte) { u.tapMessage(to, raw) }
	}
}

// tapMessage relays one inbound JSON-RPC message if it is a progress or log
// notification (relay.Notification); s is the session it arrived on, nil if
// unknown.
func (u *Upstream) tapMessage(s *session, raw []byte) {
	switch progress, log := relay.Notification(raw, u.creds.Secrets()); {
	case progress != nil:
		u.relayProgress(progress)
	case log != nil:
		u.relayLog(s, log)
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
