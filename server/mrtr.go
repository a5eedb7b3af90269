package server

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/rounds"
)

// Multi-round-trip calls: a retry's request state identifies the logical
// call it continues (package rounds tells how). Policy and approval apply
// to its first round (decide), one audit row to its last (observe).

// stateTTL is how long a client has to answer an upstream's input request.
const stateTTL = 10 * time.Minute

// needsInput reports whether res asks the client for input: the logical
// call goes on.
func (res *Result) needsInput() bool {
	return res != nil && (res.MCP != nil && res.MCP.NeedsInput() || res.MCP == nil && res.inputRequired)
}

// subjectOfRound is what a call's request state is bound to.
func subjectOfRound(r *Request) string {
	return rounds.Subject(r.Caller.Principal, r.Caller.Tenant, r.Caller.Session, "tools/call", r.Entry.Canonical, r.ArgsHash)
}

// rounds is the call path's step for multi-round-trip calls: it opens the
// state a retry carries (refusing one that does not open), and seals the
// state of a result that asks for input.
func (g *Gateway) rounds(next Handler) Handler {
	return func(ctx context.Context, r *Request) (*Result, error) {
		if r.round != nil && r.stateToken != "" {
			st, err := g.sealer.Open(r.stateToken, subjectOfRound(r))
			if err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
			}
			r.cont, r.round.State = &st, st.Upstream
			r.OperationID, r.Start = st.Call, time.Unix(0, st.Start)
			r.Decision = policy.Decision{Action: policy.Action(st.Decision), Rule: st.Rule}
			r.ApprovalID = st.Approval
		}
		res, err := next(ctx, r)
		if err != nil || !res.needsInput() {
			return res, err
		}
		st := rounds.State{Call: r.OperationID, Start: r.Start.UnixNano(), Decision: string(r.Decision.Action), Rule: r.Decision.Rule, Approval: r.ApprovalID}
		return g.sealResult(res, st, subjectOfRound(r))
	}
}

// sealResult replaces the request state of res, which asks for input, with
// one Legate issues, holding the upstream's.
func (g *Gateway) sealResult(res *Result, st rounds.State, subject string) (*Result, error) {
	seal := func(up string) string { st.Upstream = up; return g.sealer.Seal(st, subject) }
	if res.MCP != nil {
		res.MCP.RequestState = seal(res.MCP.RequestState)
		return res, nil
	}
	var err error
	res.Raw, err = rounds.Reseal(res.Raw, seal)
	return res, err
}
