package server

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/auth"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/server/fastpath"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/upstream"
)

// Request is one tool call on its way through the call path. The MCP
// server, `legate tools call` and any future front door all build one and
// hand it to Gateway.Call, so every call takes the same path.
type Request struct {
	// Entry is the catalog entry of the tool called.
	Entry *catalog.Entry
	// Args is the arguments object as the client sent it.
	Args json.RawMessage
	// Caller made the call.
	Caller connectors.Caller
	// Class is the operation class of this call (it may depend on Args).
	Class legate.Class
	// OperationID is unique per call: the idempotency key of its writes.
	OperationID string
	// Start is when the call entered the gateway.
	Start time.Time
	// Session is the client's MCP session, nil outside MCP (the CLI).
	// Upstream calls relay progress, logs, sampling and elicitation to it.
	Session *mcp.ServerSession
	// ProgressToken is the client's progress token, nil if it gave none.
	ProgressToken any
	// ArgsHash is the SHA-256 of the arguments' canonical JSON.
	ArgsHash string

	// Decision and ApprovalID are set by the policy step, for the audit row:
	Decision   policy.Decision // the policy's decision
	ApprovalID string          // the approval request the call is bound to
	// Replay is set by the policy step when the call returns the stored
	// outcome of an approved request another call ran: the tool did not
	// run again, and the audit row says so (decision "replay").
	Replay bool

	// approved is set when the executor runs a request already approved
	// and claimed: the policy step lets it through.
	approved *store.Approval
	// system is set for the gateway's own calls (approvals.notify), which
	// the operator authorized by naming the tool: policy allows them.
	system    bool
	principal *auth.Principal // the authenticated caller, for the gateway's own tools

	// round is a 2026-07-28 client's round of a call, stateToken the
	// request state its retry carries, and cont what that state holds once
	// opened: the logical call it continues (roundsStep).
	round      *rounds.Round
	stateToken string
	cont       *rounds.State

	// relay is set by the HTTP fast path, which writes the response
	// itself: an upstream's result comes back as the JSON it sent
	// (Result.Raw) where the call can be relayed as bytes.
	relay    fastpath.Relay
	heldOnly bool // the fast path cannot run the call: it takes it only to answer it as a task (fastPath.Call)
}

// Result is a call's result along the call path: the result decoded (MCP),
// or an upstream's result as the JSON it sent (Raw), which the fast path
// writes as it is. Either way IsError and Size say whether it is the
// tool's own failure and how many bytes of text its content holds, for the
// audit and the metrics; a relayed result's are read once, where the
// relay reads the answer.
type Result struct {
	MCP     *mcp.CallToolResult
	Raw     json.RawMessage
	IsError bool
	Size    int

	inputRequired bool // Raw is a result of type input_required
}

// size is res.Size, 0 for none.
func (res *Result) size() int64 {
	if res == nil {
		return 0
	}
	return int64(res.Size)
}

// decoded is the Result holding res, which may be nil.
func decoded(res *mcp.CallToolResult) *Result {
	out := &Result{MCP: res}
	if res != nil {
		out.IsError = res.IsError
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				out.Size += len(t.Text)
			}
		}
	}
	return out
}

// relayed is the Result holding an upstream's result relayed as bytes.
func relayed(rel upstream.Relayed) *Result {
	return &Result{Raw: rel.JSON, IsError: rel.IsError, Size: rel.Size, inputRequired: rel.InputRequired}
}

// errHandBack is the policy step's answer to a call on the fast path
// (Request.relay) that needs approval: the fast path hands the request to
// the SDK, which takes it along the call path again. The steps above the
// policy step pass it on without recording the call, which the SDK's run
// records.
var errHandBack = errors.New("the call needs approval: the SDK's path takes it")

// Handler handles one call. A tool failure is an error, a *legate.Error
// carrying its canonical code, which the MCP edge turns into an isError
// result; a *jsonrpc.Error is relayed to the client as a protocol error.
// A result with IsError set (an upstream tool's own failure) passes as is.
type Handler func(ctx context.Context, r *Request) (*Result, error)
