package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/audit"
	"github.com/legate-mcp/legate/catalog"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/server/waitnote"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/telemetry/spans"
	"github.com/legate-mcp/legate/upstream"
)

// executor holds calls for approval and runs approved requests: the
// policy step of the call path, the background run of requests approved
// after their call returned, and the built-in legate.approval_status.
type executor struct {
	inbox        *policy.Inbox
	policy       func() *policy.Policy // the policy in use now
	log          *slog.Logger
	metrics      *audit.Metrics
	catalog      func() *catalog.Catalog
	auditRefused func(store.AuditRow)
	// record decides a request as every decision is made: audited and
	// measured (Gateway.decide, set by New).
	record func(ctx context.Context, id string, approve bool, decider, tenant, reason string) (*store.Approval, error)
	// call is the whole call path, through which approved requests and
	// notifications run; set once the path is built.
	call Handler
	// life ends when the gateway closes, cancelling notifications in
	// flight; notifying counts them, so Close can wait for them.
	life      context.Context
	notifying sync.WaitGroup
	panelURL  string // the panel's inbox, named to held calls; "" without a panel
}

// decide is the policy step of the call path: deny, allow, or hold the
// call for approval.
func (x *executor) decide(next Handler) Handler {
	return func(ctx context.Context, r *Request) (*Result, error) {
		switch {
		case r.approved != nil:
			// The executor runs a request already approved and claimed.
			r.Decision = policy.Decision{Action: policy.Approve, Rule: -1}
			r.ApprovalID = r.approved.ID
			return next(ctx, r)
		case r.system:
			r.Decision = policy.Decision{Action: policy.Allow, Rule: -1}
		case r.cont != nil:
			// A later round of a call this step let through (mrtr.go).
			if r.relay != nil {
				r.relay.keep()
			}
			return next(ctx, r)
		default:
			r.Decision = x.policy().Decide(subjectOf(r))
		}
		d := r.Decision
		if r.relay != nil {
			if d.Action == policy.Approve {
				return nil, errHandBack
			}
			r.relay.keep()
		}
		x.metrics.Decisions.WithLabelValues(string(d.Action)).Inc()
		spans.Event(ctx, "policy.decision", "action", string(d.Action))
		switch d.Action {
		case policy.Deny:
			reason := d.Reason
			if reason == "" {
				reason = "denied by policy " + d.RuleName(r.Class)
			}
			return nil, &legate.Error{Code: legate.CodePolicyDenied, Message: fmt.Sprintf("%s: %s", r.Entry.Canonical, reason)}
		case policy.Approve:
			return x.holdForApproval(ctx, r, next)
		}
		return next(ctx, r)
	}
}

// subjectOf is what policy rules match of a call.
func subjectOf(r *Request) policy.Subject {
	s := policy.Subject{Principal: r.Caller.Principal, Tenant: r.Caller.Tenant, Tool: r.Entry.Canonical, Class: r.Class}
	switch t := r.Entry.Target.(type) {
	case *nativeTool:
		if t.inst != nil {
			s.Connector = t.inst.def.ID
		} else {
			s.Connector = builtinSource
		}
	case *upstream.Tool:
		s.Upstream = t.Upstream
	}
	return s
}

// builtinSource is the "connector" of the built-in tools in policy rules.
const builtinSource = "legate"

// holdForApproval parks the call as an approval request bound to its
// principal, tenant, tool, arguments and tool definition; waits up to
// approvals.wait for a decision (asking the user in the client when the
// rule says confirm: client and the session can answer); runs it once if
// approved; and otherwise tells the client how to follow up.
func (x *executor) holdForApproval(ctx context.Context, r *Request, next Handler) (*Result, error) {
	def, _ := json.Marshal(r.Entry.Tool)
	args := r.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	a, created, err := x.inbox.Open(ctx, &store.Approval{
		Principal: r.Caller.Principal, Tenant: r.Caller.Tenant, Session: r.Caller.Session,
		Tool: r.Entry.Canonical, Class: string(r.Class), Args: args, ArgsHash: r.ArgsHash,
		DefHash: r.Entry.Hash, Definition: def,
	})
	if err != nil {
		return nil, fmt.Errorf("opening approval request: %w", err)
	}
	r.ApprovalID = a.ID
	// Whoever runs the request (this call, another, or the executor), its
	// writes carry the approval id as their idempotency key.
	r.OperationID = a.ID
	if created {
		x.log.Info("approval requested", "approval", a.ID, "tool", a.Tool, "principal", a.Principal, "expires", a.ExpiresAt)
		x.notify(a)
		if r.Decision.Confirm == policy.ConfirmClient && !x.inbox.Config().SeparateApprover {
			x.confirmInClient(ctx, r, a)
		}
	}
	hold := x.inbox.Config().WaitTime()
	tick := waitnote.Start(ctx, r.Session, r.ProgressToken, hold, waitnote.Message(a.ID, hold, x.panelURL))
	deadline := time.Now().Add(hold)
	ran := false // this call ran the tool
	// The span of the wait ends at the first decision.
	_, wait := spans.Step(ctx, "approval.wait")
	for {
		a, err = x.inbox.Await(ctx, a.ID, time.Until(deadline), tick)
		wait.End()
		if err != nil {
			return nil, err
		}
		if a.State != store.StateApproved {
			break
		}
		// Whether this call won the claim and ran it or another caller holds
		// it, the next Await sees the outcome once it is recorded.
		if _, err := x.inbox.Execute(ctx, a, func(ctx context.Context) (json.RawMessage, error) {
			ran = true
			res, err := next(ctx, r)
			if err != nil {
				return nil, err
			}
			return json.Marshal(res.MCP)
		}, outcomeOf); err != nil {
			return nil, err
		}
	}
	r.Replay = !ran && (a.State == store.StateExecuted || a.State == store.StateFailed)
	res, err := settledResult(a)
	if err != nil {
		return nil, err
	}
	return decoded(res), nil
}

// settledResult is what a call bound to a gets: the stored outcome, a
// denial, or APPROVAL_PENDING with how to follow up.
func settledResult(a *store.Approval) (*mcp.CallToolResult, error) {
	switch a.State {
	case store.StateExecuted, store.StateFailed:
		var res mcp.CallToolResult
		if err := json.Unmarshal(a.Outcome, &res); err != nil {
			return nil, fmt.Errorf("approval %s: stored outcome unreadable: %w", a.ID, err)
		}
		return &res, nil
	case store.StateDenied:
		msg := fmt.Sprintf("%s was denied by %s", a.Tool, a.Decider)
		if a.Reason != "" {
			msg += ": " + a.Reason
		}
		return nil, &legate.Error{Code: legate.CodeApprovalDenied, Message: msg, Details: map[string]any{"approval_id": a.ID}}
	case store.StateExpired:
		return nil, &legate.Error{Code: legate.CodeApprovalDenied, Message: fmt.Sprintf("approval %s expired undecided", a.ID), Details: map[string]any{"approval_id": a.ID}}
	}
	if a.State == store.StatePending && !a.ExpiresAt.After(time.Now()) {
		return nil, &legate.Error{Code: legate.CodeApprovalDenied, Message: fmt.Sprintf("approval %s expired undecided", a.ID), Details: map[string]any{"approval_id": a.ID}}
	}
	return nil, &legate.Error{
		Code: legate.CodeApprovalPending,
		Message: fmt.Sprintf("%s needs approval %s (state %s) until %s. Once decided it runs once; call again with the same arguments, "+
			"or call legate.approval_status, to get its outcome", a.Tool, a.ID, a.State, a.ExpiresAt.Format(time.RFC3339)),
		Details: map[string]any{"approval_id": a.ID, "expires_at": a.ExpiresAt.Format(time.RFC3339), "state": a.State},
	}
}

// outcomeOf is the stored outcome of a run that failed.
func outcomeOf(err error) json.RawMessage {
	b, _ := json.Marshal(ErrorResult(err))
	return b
}

// confirmInClient asks the user in the client, when its session can
// answer elicitation, and records the answer as the decision. Any failure
// leaves the request in the inbox.
func (x *executor) confirmInClient(ctx context.Context, r *Request, a *store.Approval) {
	ss := r.Session
	if ss == nil {
		return
	}
	if p := ss.InitializeParams(); p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return
	}
	ectx, cancel := context.WithTimeout(ctx, x.inbox.Config().WaitTime())
	defer cancel()
	res, err := ss.Elicit(ectx, &mcp.ElicitParams{
		Message: fmt.Sprintf("Allow %s (%s) to run with these arguments?\n%s", a.Tool, a.Class, string(a.Args)),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"approve": map[string]any{"type": "boolean", "title": "Allow this call", "default": false},
			},
			"required": []string{"approve"},
		},
	})
	if err != nil {
		x.log.Info("confirmation in the client failed; the request stays in the inbox", "approval", a.ID, "error", err)
		return
	}
	approve := res.Action == "accept" && res.Content["approve"] == true
	decider := r.Caller.Principal + " (in the client)"
	if _, err := x.record(ctx, a.ID, approve, decider, r.Caller.Tenant, "answered in the client: "+res.Action); err != nil {
		x.log.Info("recording the client's answer", "approval", a.ID, "error", err)
	}
}

// interrupted is the outcome of an approved call whose run stopped with
// its process.
var interrupted = outcomeOf(&legate.Error{Code: legate.CodeTransient,
	Message: "Legate stopped while this approved call was running; it is not run again because it may have taken effect"})

// runApproved, until ctx ends: executes approved requests nobody is
// waiting for (decided through the CLI or API after the call returned
// APPROVAL_PENDING, or approved before a restart); marks failed the runs
// whose process stopped; expires overdue requests.
func (x *executor) runApproved(ctx context.Context) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		n, err := x.inbox.Store().Expire(ctx, time.Now())
		x.failed(ctx, "expire", "", err)
		if n > 0 {
			x.log.Info("approval requests expired", "count", n)
		}
		n, err = x.inbox.Recover(ctx, interrupted)
		x.failed(ctx, "recover", "", err)
		if n > 0 {
			x.log.Warn("approved calls interrupted by a stop were marked failed, not run again", "count", n)
		}
		approved, err := x.inbox.Store().List(ctx, store.ApprovalFilter{State: store.StateApproved, AllTenants: true})
		x.failed(ctx, "list_approved", "", err)
		for _, a := range approved {
			x.runOne(ctx, a)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// runOne executes one approved request through the call path, if its tool
// still exists with the definition that was approved.
func (x *executor) runOne(ctx context.Context, a *store.Approval) {
	e, ok := x.catalog().Lookup(a.Tool)
	r := &Request{Entry: e, Args: a.Args, Caller: connectors.Caller{Principal: a.Principal, Tenant: a.Tenant, Session: a.Session},
		OperationID: a.ID, Start: time.Now(), ArgsHash: a.ArgsHash, approved: a}
	_, err := x.inbox.Execute(ctx, a, func(ctx context.Context) (json.RawMessage, error) {
		// A run refused here never reaches the call path: audit it here.
		refused := store.AuditRow{Principal: a.Principal, Tenant: a.Tenant, Session: a.Session, Tool: a.Tool, Source: "approval",
			Class: string(a.Class), Decision: string(policy.Approve), ApprovalID: a.ID, ArgsHash: a.ArgsHash}
		switch {
		case !ok:
			refused.Outcome = string(legate.CodeNotFound)
			x.auditRefused(refused)
			return nil, &legate.Error{Code: legate.CodeNotFound, Message: fmt.Sprintf("tool %s no longer exists", a.Tool)}
		case e.Hash != a.DefHash:
			refused.Outcome = string(legate.CodePolicyDenied)
			x.auditRefused(refused)
			return nil, &legate.Error{Code: legate.CodePolicyDenied, Message: fmt.Sprintf("the definition of %s changed after it was approved; call again for a new approval", a.Tool)}
		}
		r.Class = classOf(e, a.Args)
		res, err := x.call(ctx, r)
		if err != nil {
			return nil, err
		}
		return json.Marshal(res.MCP)
	}, outcomeOf)
	x.failed(ctx, "run_approved", a.ID, err)
}

// failed logs and counts an error of background work, op naming the
// work and approvalID its request if any; nil, or an error of the work's
// end (ctx done), is neither.
func (x *executor) failed(ctx context.Context, op, approvalID string, err error) {
	if err == nil || ctx.Err() != nil {
		return
	}
	x.metrics.BackgroundErrors.WithLabelValues(op).Inc()
	x.log.Error("approvals: "+strings.ReplaceAll(op, "_", " ")+" failed", "approval", approvalID, "error", err)
}

// statusTool is the built-in read-only tool legate.approval_status.
func (x *executor) statusTool() connectors.Tool {
	type args struct {
		ApprovalID string `json:"approval_id" jsonschema:"the approval id an APPROVAL_PENDING result gave"`
	}
	return connectors.NewTool("approval_status",
		"Report the state of an approval request (pending, approved, denied, expired, executing, executed, failed) and, once it ran, its outcome.",
		legate.ClassRead,
		func(ctx context.Context, call *connectors.Call, in *args) (*legate.Result, error) {
			a, err := x.inbox.Store().Get(ctx, strings.TrimSpace(in.ApprovalID))
			if err != nil || a.Principal != call.Caller.Principal || a.Tenant != call.Caller.Tenant {
				return nil, legate.Errorf(legate.CodeNotFound, "no approval %q of yours", in.ApprovalID)
			}
			out := map[string]any{"approval_id": a.ID, "tool": a.Tool, "state": a.State, "expires_at": a.ExpiresAt}
			if a.Decider != "" {
				out["decided_by"], out["reason"] = a.Decider, a.Reason
			}
			if len(a.Outcome) > 0 {
				out["outcome"] = a.Outcome
				noteReplay(ctx, a.ID)
			}
			return &legate.Result{Structured: out}, nil
		})
}

// entryHash is the definition hash of a native catalog entry.
func entryHash(t *mcp.Tool, class legate.Class) string {
	b, _ := json.Marshal(struct {
		Tool  *mcp.Tool
		Class legate.Class
	}{t, class})
	return policy.ArgsHash(b)
}

// Decide approves or denies a pending request, audited and measured as
// every decision is (operations.Approvals), by a decider of no tenant. A
// waiting call wakes at once; with none, the executor runs an approved
// request within half a second.
func (g *Gateway) Decide(ctx context.Context, id string, approve bool, decider, reason string) (*store.Approval, error) {
	return g.decide(ctx, id, approve, decider, "", reason)
}
