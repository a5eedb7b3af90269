package upstream

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/upstream/relay"
)

// enveloped reports whether client's request goes on session s as one of
// protocol 2026-07-28 (package rounds): the client speaks it and the
// upstream is stateless.
func (u *Upstream) enveloped(s *session, client Client) bool {
	return client.Round != nil && u.relayable() && s.cs.ID() == ""
}

// needsInput returns a decoded if it is a result of type input_required.
func (a answer) needsInput() (*mcp.CallToolResult, bool) {
	if a.res != nil {
		return a.res, a.res.NeedsInput()
	}
	return rounds.Decode(a.rel.JSON, a.rel.InputRequired)
}

// callRounds makes a call, and for a client with a session, asks it for
// the input the upstream requests and calls again until the result is
// complete. A client of protocol 2026-07-28 gets input_required results as
// they are; a caller without a session (the CLI) gets an error.
func (u *Upstream) callRounds(ctx context.Context, t *Tool, args json.RawMessage, client Client, relay bool) (answer, error) {
	a, err := u.call(ctx, t, args, client, relay)
	for n := 1; err == nil && client.Round == nil; n++ {
		res, ok := a.needsInput()
		if !ok {
			break
		}
		if client.Session == nil || n >= rounds.MaxRounds {
			return answer{}, &legate.Error{Code: legate.CodeInvalidArgument, Message: fmt.Sprintf("upstream %s asks for input (%d requests) the caller cannot give", u.cfg.ID, len(res.InputRequests))}
		}
		in, ferr := rounds.Fulfil(ctx, client.Session, res.InputRequests)
		if ferr != nil {
			return answer{}, &legate.Error{Code: legate.CodeInvalidArgument, Message: fmt.Sprintf("asking the client for the input upstream %s requests", u.cfg.ID), Err: ferr}
		}
		client.Round = &rounds.Round{Meta: rounds.SessionMeta(client.Session), Responses: in, State: res.RequestState}
		a, err = u.call(ctx, t, args, client, relay)
		client.Round = nil
	}
	return a, err
}

// Request sends prompts/get or resources/read of a client with a Round to
// upstream id on the relay's connection (as a tool call is: send), and
// returns the result as sent. params are the request's own (an object)
// without the round. ok is false when the SDK client must send it. A task
// method about an upstream's task handed through (client.Tasks, name the
// task's id) is sent so too.
func (m *Manager) Request(ctx context.Context, id string, client Client, method, name string, params json.RawMessage) (res json.RawMessage, ok bool, err error) {
	u, found := m.Upstream(id)
	if !found || client.Round == nil || len(params) < 2 {
		return nil, false, nil
	}
	s, err := u.pool.session(ctx, client)
	if err != nil || s.conn == nil || s.owner != nil {
		return nil, false, nil
	}
	r := client.Round
	if rounds.IsHeld(r.State) {
		v, err := u.resume(ctx, r)
		return rounds.JSON(v), true, err
	}
	c := u.begin(ctx, s, client)
	body := append([]byte(`{"jsonrpc":"2.0","id":"`+c.token+`","method":"`+method+`","params":`), params[:len(params)-1]...)
	version := s.conn.Version()
	if u.enveloped(s, client) {
		version = relay.StandardHeadersVersion
	}
	body = append(rounds.AppendParams(body, r.Responses, r.State, rounds.Meta(r.Meta, "", version < relay.StandardHeadersVersion, client.Tasks)), `}}`...)
	res, held, err := u.send(ctx, s, c, body, version, method, name, true)
	if res == nil {
		return rounds.JSON(held), true, err
	}
	return res, true, nil
}

// callHeld makes, or resumes, a 2026-07-28 client's call on a shared
// session, held while the client answers the upstream's mid-call requests.
// A call relayed as bytes is held only once its upstream asks (send).
func (u *Upstream) callHeld(ctx context.Context, s *session, name string, args json.RawMessage, client Client) (answer, error) {
	if rounds.IsHeld(client.Round.State) {
		v, err := u.resume(ctx, client.Round)
		return heldAnswer(v), err
	}
	// It outlives this round's request, which relays progress meanwhile.
	first := context.WithoutCancel(ctx)
	c := u.m.held.Start(func(held context.Context, ask func(context.Context, mcp.InputRequest) (json.RawMessage, error)) (any, error) {
		ctx, cancel := context.WithCancel(first)
		defer cancel()
		defer context.AfterFunc(held, cancel)()
		defer context.AfterFunc(u.m.ctx, cancel)() // Close waits for it
		client.ask = ask
		return u.callOn(ctx, s, name, args, client)
	})
	v, err := c.Wait(ctx)
	return heldAnswer(v), err
}

// resume hands the answers of round r to the held call its state names
// and waits for the call's result or next requests.
func (u *Upstream) resume(ctx context.Context, r *rounds.Round) (any, error) {
	c, _, err := u.m.held.Resume(r.State)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	c.Answer(r.Responses)
	return c.Wait(ctx)
}

// heldAnswer is a held call's result as an answer.
func heldAnswer(v any) answer {
	if raw, ok := v.(json.RawMessage); ok {
		return answer{rel: relay.Of(raw)}
	}
	res, _ := v.(*mcp.CallToolResult)
	return answer{res: res}
}

// routeAsk answers a request the upstream sends on a shared session during
// the one call under way on it (rounds.Answer).
func (s *session) routeAsk(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		var pc *pendingCall
		n := 0
		s.inflight.Range(func(_, v any) bool { pc, n = v.(*pendingCall), n+1; return n < 2 })
		if ir, ok := rounds.InputOf(req); ok && n == 1 && (pc.client.ask != nil || pc.client.Session != nil) {
			return rounds.Answer(ctx, ir, pc.client.ask, pc.ctx, pc.client.Session)
		}
		return next(ctx, method, req)
	}
}
