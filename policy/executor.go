package policy

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
	"github.com/legate-mcp/legate/server/toolresult"
	"github.com/legate-mcp/legate/server/waitnote"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/telemetry/spans"
)

// Executor holds calls for approval and runs approved requests: the
// approval half of the call path's policy step (Hold), the background run
// of requests approved after their call returned (RunApproved), the
// notification of new requests, and the built-in legate.approval_status.
// It reaches the gateway only through the functions of its options: the
// call path, the catalog and the audit.
type Executor struct {
	inbox *Inbox
	o     ExecutorOptions
	// life ends when the gateway closes, cancelling notifications in
	// flight; notifying counts them, so Close can wait for them.
	life      context.Context
	endLife   context.CancelFunc
	notifying sync.WaitGroup
}

// ExecutorOptions are what an Executor needs of the gateway.
type ExecutorOptions struct {
	Log     *slog.Logger
	Metrics *audit.Metrics
	// PanelURL is the panel's inbox, named to held calls; "" without a panel.
	PanelURL string
	// Catalog is the catalog in use now, where approved requests and
	// notifications find their tools.
	Catalog func() *catalog.Catalog
	// Run takes approved request a, a call to e, along the whole call
	// path, whose policy step lets it through as already approved.
	Run func(ctx context.Context, e *catalog.Entry, a *store.Approval) (*mcp.CallToolResult, error)
	// Notify takes the gateway's own call of e with args along the call
	// path (approvals.notify): audited and measured, allowed by policy. A
	// failure of the tool is an error.
	Notify func(ctx context.Context, e *catalog.Entry, args json.RawMessage, operationID string) error
	// Refused writes the audit row of an approved request refused before
	// the call path (its tool gone or changed).
	Refused func(store.AuditRow)
	// Decide records the decision a user made in the client (confirm:
	// client) as every decision is recorded: audited and measured; tenant
	// is the decider's.
	Decide func(ctx context.Context, id string, approve bool, decider, tenant, reason string) error
	// NoteReplay marks the call of ctx as answering with the stored
	// outcome of request id (legate.approval_status), for its audit row.
	NoteReplay func(ctx context.Context, id string)
}

// NewExecutor returns the executor of inbox's requests. Errors of the
// inbox's heartbeat, which runs within a call that cannot be failed for
// it, are logged and counted as the executor's are.
func NewExecutor(inbox *Inbox, o ExecutorOptions) *Executor {
	x := &Executor{inbox: inbox, o: o}
	x.life, x.endLife = context.WithCancel(context.Background())
	inbox.OnError(func(op, id string, err error) { x.failed(context.Background(), op, id, err) })
	return x
}

// Close cancels the notifications in flight and waits for them.
func (x *Executor) Close() {
	x.endLife()
	x.notifying.Wait()
}

// Done is closed once the executor is closed: the gateway's end.
func (x *Executor) Done() <-chan struct{} { return x.life.Done() }

// Held is a call the policy step holds for approval.
type Held struct {
	Entry    *catalog.Entry
	Args     json.RawMessage
	Caller   connectors.Caller
	Class    legate.Class
	ArgsHash string
	// Confirm is where the rule asks for the approval (ConfirmClient: the
	// user, in the client, if Session can answer).
	Confirm       string
	Session       *mcp.ServerSession
	ProgressToken any
	// Bound is called with the request's id once the call is bound to it,
	// before it may run: whoever runs the request (this call, another, or
	// the executor), its writes carry that id as their idempotency key.
	Bound func(id string)
	// Run runs the call past the policy step, once approved.
	Run func(ctx context.Context) (*mcp.CallToolResult, error)
	// Profile and CredentialSet are what the call is made with (the
	// profile of its view, its profile's credentials_name), recorded for
	// whoever runs it.
	Profile, CredentialSet string
}

// Hold parks call h as an approval request bound to its principal,
// tenant, tool, arguments and tool definition; waits up to approvals.wait
// for a decision (asking the user in the client when the rule says
// confirm: client and the session can answer); runs it once if approved;
// and otherwise tells the client how to follow up. replay reports that the
// result is the stored outcome of a run another call or the executor made.
func (x *Executor) Hold(ctx context.Context, h Held) (res *mcp.CallToolResult, replay bool, err error) {
	a, created, err := x.open(ctx, h)
	if err != nil {
		return nil, false, err
	}
	if created && h.Confirm == ConfirmClient && !x.inbox.Config().SeparateApprover {
		x.confirmInClient(ctx, h, a)
	}
	hold := x.inbox.Config().WaitTime()
	tick := waitnote.Start(ctx, h.Session, h.ProgressToken, hold, waitnote.Message(a.ID, hold, x.o.PanelURL))
	deadline := time.Now().Add(hold)
	ran := false // this call ran the tool
	// The span of the wait ends at the first decision.
	_, wait := spans.Step(ctx, "approval.wait")
	for {
		a, err = x.inbox.Await(ctx, a.ID, time.Until(deadline), tick)
		wait.End()
		if err != nil {
			return nil, false, err
		}
		if a.State != store.StateApproved {
			break
		}
		// Whether this call won the claim and ran it or another caller holds
		// it, the next Await sees the outcome once it is recorded.
		if _, err := x.inbox.Execute(ctx, a, func(ctx context.Context) (json.RawMessage, error) {
			ran = true
			res, err := h.Run(ctx)
			if err != nil {
				return nil, err
			}
			return json.Marshal(res)
		}, outcomeOf); err != nil {
			return nil, false, err
		}
	}
	replay = !ran && (a.State == store.StateExecuted || a.State == store.StateFailed)
	res, err = settledResult(a)
	return res, replay, err
}

// Open parks call h as an approval request, as Hold does, and returns it
// without waiting for a decision: the request a client of the tasks
// extension follows as a task (package tasks). Once approved, RunApproved
// runs it, exactly once, wherever the request is followed from.
func (x *Executor) Open(ctx context.Context, h Held) (*store.Approval, error) {
	a, _, err := x.open(ctx, h)
	return a, err
}

// open parks call h as an approval request bound to its caller, tool,
// arguments and tool definition, or finds the live one it is bound to
// (created reports which), tells h.Bound its id, and notifies a new one.
func (x *Executor) open(ctx context.Context, h Held) (a *store.Approval, created bool, err error) {
	def, _ := json.Marshal(h.Entry.Tool)
	args := h.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	a, created, err = x.inbox.Open(ctx, &store.Approval{
		Principal: h.Caller.Principal, Tenant: h.Caller.Tenant, Session: h.Caller.Session, Profile: h.Profile, CredentialSet: h.CredentialSet,
		Tool: h.Entry.Canonical, Class: string(h.Class), Args: args, ArgsHash: h.ArgsHash,
		DefHash: h.Entry.Hash, Definition: def,
	})
	if err != nil {
		return nil, false, fmt.Errorf("opening approval request: %w", err)
	}
	h.Bound(a.ID)
	if created {
		x.o.Log.Info("approval requested", "approval", a.ID, "tool", a.Tool, "principal", a.Principal, "expires", a.ExpiresAt)
		x.notify(a)
	}
	return a, created, nil
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
	b, _ := json.Marshal(toolresult.Error(err))
	return b
}

// confirmInClient asks the user in the client, when its session can
// answer elicitation, and records the answer as the decision. Any failure
// leaves the request in the inbox.
func (x *Executor) confirmInClient(ctx context.Context, h Held, a *store.Approval) {
	ss := h.Session
	if ss == nil {
		return
	}
	if p := ss.InitializeParams(); p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return
	}
	ectx, cancel := context.WithTimeout(ctx, x.inbox.Config().WaitTime())
	defer cancel()
	res, err := ss.Elicit(ectx, &mcp.ElicitParams{
		Message:         ConfirmMessage(a),
		RequestedSchema: ConfirmSchema(),
	})
	if err != nil {
		x.o.Log.Info("confirmation in the client failed; the request stays in the inbox", "approval", a.ID, "error", err)
		return
	}
	approve := Confirmed(res.Action, res.Content)
	decider := h.Caller.Principal + " (in the client)"
	if err := x.o.Decide(ctx, a.ID, approve, decider, h.Caller.Tenant, "answered in the client: "+res.Action); err != nil {
		x.o.Log.Info("recording the client's answer", "approval", a.ID, "error", err)
	}
}

// ConfirmField is the boolean a client's user sets to allow a call a rule
// with confirm: client holds: {"confirm": true}.
const ConfirmField = "confirm"

// ConfirmMessage is the question a client's user answers to allow a.
func ConfirmMessage(a *store.Approval) string {
	return fmt.Sprintf("Allow %s (%s) to run with these arguments?\n%s", a.Tool, a.Class, string(a.Args))
}

// ConfirmSchema is the form that asks it: one boolean, ConfirmField.
func ConfirmSchema() map[string]any {
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{ConfirmField: map[string]any{"type": "boolean", "title": "Allow this call", "default": false}},
		"required":   []string{ConfirmField},
	}
}

// Confirmed reports whether an answer to ConfirmSchema allows the call:
// accepted, with confirm: true (or approve: true, the field's name before
// it was confirm). Anything else declines.
func Confirmed(action string, content map[string]any) bool {
	return action == "accept" && (content[ConfirmField] == true || content["approve"] == true)
}

// interrupted is the outcome of an approved call whose run stopped with
// its process.
var interrupted = outcomeOf(&legate.Error{Code: legate.CodeTransient,
	Message: "Legate stopped while this approved call was running; it is not run again because it may have taken effect"})

// RunApproved, until ctx ends: executes approved requests nobody is
// waiting for (decided through the CLI or API after the call returned
// APPROVAL_PENDING, or approved before a restart); marks failed the runs
// whose process stopped; expires overdue requests.
func (x *Executor) RunApproved(ctx context.Context) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		n, err := x.inbox.Store().Expire(ctx, time.Now())
		x.failed(ctx, "expire", "", err)
		if n > 0 {
			x.o.Log.Info("approval requests expired", "count", n)
		}
		n, err = x.inbox.Recover(ctx, interrupted)
		x.failed(ctx, "recover", "", err)
		if n > 0 {
			x.o.Log.Warn("approved calls interrupted by a stop were marked failed, not run again", "count", n)
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
func (x *Executor) runOne(ctx context.Context, a *store.Approval) {
	e, ok := x.o.Catalog().Lookup(a.Tool)
	_, err := x.inbox.Execute(ctx, a, func(ctx context.Context) (json.RawMessage, error) {
		// A run refused here never reaches the call path: audit it here.
		refused := store.AuditRow{Principal: a.Principal, Tenant: a.Tenant, Session: a.Session, Tool: a.Tool, Source: "approval",
			Class: string(a.Class), Decision: string(Approve), ApprovalID: a.ID, ArgsHash: a.ArgsHash}
		switch {
		case !ok:
			refused.Outcome = string(legate.CodeNotFound)
			x.o.Refused(refused)
			return nil, &legate.Error{Code: legate.CodeNotFound, Message: fmt.Sprintf("tool %s no longer exists", a.Tool)}
		case e.Hash != a.DefHash:
			refused.Outcome = string(legate.CodePolicyDenied)
			x.o.Refused(refused)
			return nil, &legate.Error{Code: legate.CodePolicyDenied, Message: fmt.Sprintf("the definition of %s changed after it was approved; call again for a new approval", a.Tool)}
		}
		res, err := x.o.Run(ctx, e, a)
		if err != nil {
			return nil, err
		}
		return json.Marshal(res)
	}, outcomeOf)
	x.failed(ctx, "run_approved", a.ID, err)
}

// failed logs and counts an error of background work, op naming the
// work and approvalID its request if any; nil, or an error of the work's
// end (ctx done), is neither.
func (x *Executor) failed(ctx context.Context, op, approvalID string, err error) {
	if err == nil || ctx.Err() != nil {
		return
	}
	x.o.Metrics.BackgroundErrors.WithLabelValues(op).Inc()
	x.o.Log.Error("approvals: "+strings.ReplaceAll(op, "_", " ")+" failed", "approval", approvalID, "error", err)
}

// StatusTool is the built-in read-only tool legate.approval_status.
func (x *Executor) StatusTool() connectors.Tool {
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
				x.o.NoteReplay(ctx, a.ID)
			}
			return &legate.Result{Structured: out}, nil
		})
}
