package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/upstream"
)

// A prompts/get or resources/read of a client of protocol 2026-07-28 may
// take several rounds (SEP-2322). It goes to an upstream that keeps no
// sessions as a request of that protocol (upstream.Manager.Request); a
// result that asks for input reaches the client under a request state
// Legate seals (package rounds), bound to the caller and the request and
// naming the upstream that answered, so that the retry reaches that
// upstream with the upstream's own state.

// round is a 2026-07-28 client's round of a request.
type round struct {
	*rounds.Round
	subject  string
	upstream string // the upstream a retry goes to; "" on a first round
}

// newProtocol reports whether ss's client speaks 2026-07-28 or later.
func newProtocol(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= "2026-07-28"
}

// openRound is the round of a request of method for target (a prompt's
// name, a resource's URI) from who, opening the request state its retry
// carries; nil for a client of another protocol. A retry whose state does
// not open is refused.
func (pr *Proxy) openRound(c upstream.Client, who, method, target string, meta mcp.Meta, responses mcp.InputResponseMap, state string) (*round, error) {
	if !newProtocol(c.Session) {
		return nil, nil
	}
	r := &round{Round: rounds.NewRound(meta, responses), subject: rounds.Subject(who, c.Tenant, "", method, target)}
	if state == "" {
		return r, nil
	}
	st, err := pr.sealer.Open(state, r.subject)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	r.State, r.upstream = st.Upstream, st.Call
	return r, nil
}

// roundTrip sends params (the upstream's own, without the round) to
// upstream id for the client c in round r, and decodes the result into
// out, its request state sealed if it asks for input. ok is false when
// the request must go through the SDK client instead.
func (pr *Proxy) roundTrip(ctx context.Context, id string, c upstream.Client, r *round, method, name string, params, out any) (ok bool, err error) {
	b, err := json.Marshal(params)
	if err != nil {
		return true, err
	}
	c.Round = r.Round
	raw, ok, err := pr.ups.Request(ctx, id, c, method, name, b)
	if !ok || err != nil {
		return ok, err
	}
	if rounds.AsksInput(raw) {
		raw, err = rounds.Reseal(raw, func(up string) string {
			return pr.sealer.Seal(rounds.State{Call: id, Upstream: up}, r.subject)
		})
		if err != nil {
			return true, err
		}
	}
	return true, json.Unmarshal(raw, out)
}

// notFound reports whether err is an upstream's answer that it has no such
// resource: the next upstream may have it.
func notFound(err error) bool {
	var rpcErr *jsonrpc.Error
	return errors.As(err, &rpcErr) && (rpcErr.Code == mcp.CodeResourceNotFound || rpcErr.Code == jsonrpc.CodeInvalidParams)
}

// asking is a result that may ask for input.
type asking interface {
	*mcp.GetPromptResult | *mcp.ReadResourceResult
	NeedsInput() bool
}

// fulfil answers, for a client with a session (2025-11-25), the input an
// upstream's result asks for, by asking the client mid-call
// (rounds.Fulfil), and sends the request again (again) until the result is
// complete, for at most rounds.MaxRounds rounds. A client of protocol
// 2026-07-28 answers input_required itself: its results pass as they are.
func fulfil[R asking](ctx context.Context, c upstream.Client, res R, err error, again func(mcp.InputResponseMap, string) (R, error)) (R, error) {
	for n := 1; err == nil && res.NeedsInput() && c.Session != nil && !newProtocol(c.Session); n++ {
		var reqs mcp.InputRequestMap
		var state string
		switch r := any(res).(type) {
		case *mcp.GetPromptResult:
			reqs, state = r.InputRequests, r.RequestState
		case *mcp.ReadResourceResult:
			reqs, state = r.InputRequests, r.RequestState
		}
		if n >= rounds.MaxRounds {
			return nil, fmt.Errorf("the upstream asked for input more than %d times", rounds.MaxRounds)
		}
		raw, ferr := rounds.Fulfil(ctx, c.Session, reqs)
		var in mcp.InputResponseMap
		if ferr == nil {
			ferr = json.Unmarshal(raw, &in)
		}
		if ferr != nil {
			return nil, fmt.Errorf("asking the client for the input the upstream requests: %w", ferr)
		}
		res, err = again(in, state)
	}
	return res, err
}
