package server

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate/admin"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/server/instances"
	"github.com/legate-mcp/legate/store"
)

// SystemPrincipal is who the gateway's own calls are made by, in the audit
// and in policy rules: the notifications of approvals.notify. A static
// token's name cannot be it (TokenNamePattern has no colon).
const SystemPrincipal = "legate:system"

// executorCalls are the approval executor's (policy.Executor) ways into
// the call path: the run of a request approved after its call returned,
// and the notification of a new request.
type executorCalls struct{ g *Gateway }

// run takes approved request a, a call to e, along the whole call path;
// the policy step lets it through (Request.approved).
func (c executorCalls) run(ctx context.Context, e *catalog.Entry, a *store.Approval) (*mcp.CallToolResult, error) {
	r := &Request{Entry: e, Args: a.Args, Caller: connectors.Caller{Principal: a.Principal, Tenant: a.Tenant, Session: a.Session},
		OperationID: a.ID, Start: time.Now(), ArgsHash: a.ArgsHash, approved: a, Class: instances.ClassOf(e, a.Args)}
	res, err := c.g.call(ctx, r)
	if err != nil {
		return nil, err
	}
	return res.MCP, nil
}

// notify takes the gateway's own call of e with args along the call path
// as SystemPrincipal, which the policy step allows (Request.system); the
// tool's own failure is an error too.
func (c executorCalls) notify(ctx context.Context, e *catalog.Entry, args json.RawMessage, operationID string) error {
	r := &Request{Entry: e, Args: args, Caller: connectors.Caller{Principal: SystemPrincipal}, Class: instances.ClassOf(e, args),
		OperationID: operationID, Start: time.Now(), ArgsHash: policy.ArgsHash(args), system: true}
	res, err := c.g.call(ctx, r)
	if err == nil && res != nil && res.IsError {
		err = errors.New("the tool reported an error")
	}
	return err
}

// Decide approves or denies a pending request, audited and measured as
// every decision is (operations.Approvals), by a decider of no tenant. A
// waiting call wakes at once; with none, the executor runs an approved
// request within half a second.
func (g *Gateway) Decide(ctx context.Context, id string, approve bool, decider, reason string) (*store.Approval, error) {
	return g.decisions.Decide(ctx, admin.Decision{ID: id, Approve: approve, Decider: decider, Reason: reason})
}
