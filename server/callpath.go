package server

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/audit"
	"github.com/legate-mcp/legate/config"
	"github.com/legate-mcp/legate/connections"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/profiles"
	"github.com/legate-mcp/legate/quota"
	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/server/instances"
	"github.com/legate-mcp/legate/server/toolresult"
	"github.com/legate-mcp/legate/sources"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/tasks"
	"github.com/legate-mcp/legate/telemetry"
	"github.com/legate-mcp/legate/telemetry/spans"
	"github.com/legate-mcp/legate/upstream"
)

// The call path: every tool call, whatever its front door (the SDK's
// server, the HTTP fast path, `legate tools call`, the approval executor),
// is a Request handed to the Handler that callPath builds once, in New.
// The steps below run in the order callPath lists them, outermost first,
// each a type of its own; a reader follows a call from the top of this
// file to the bottom.

// step is one step of the call path: wrap returns the handler that does
// the step's work around next, the rest of the path (nil for the last
// step, execute, which runs the tool).
type step interface {
	wrap(next Handler) Handler
}

// callPath builds g's call path from its steps, outermost first. It is
// built once: a call costs what the steps' handlers do, nothing more.
func callPath(g *Gateway) Handler {
	gate := func() *quota.Gate { return g.now().gate } // a reload swaps it
	rules := func() *policy.Policy { return g.now().policy }
	steps := []step{
		recoverStep{log: g.log},      // a panic in the gateway's own steps: an error result
		observeStep{g: g},            // the audit row, the metrics and the span of every call
		roundsStep{sealer: g.sealer}, // a retry's request state opened, a new one sealed
		logStep{log: g.log},          // one log line per failure
		limitStep{gate: gate},        // RATE_LIMITED over a limit, QUOTA_EXCEEDED over a budget
		decideStep{rules, g.metrics, g.approvals, g.discovery, g.tasks}, // allow, deny, or hold for approval (as a task)
		recoverStep{log: g.log}, // a panicking tool: an error result, recorded above
		executeStep{g: g},       // the tool run at its source
	}
	var h Handler
	for i := len(steps) - 1; i >= 0; i-- {
		h = steps[i].wrap(h)
	}
	return h
}

// recoverStep turns a panic below it into an error result, so that one
// faulty tool cannot take the gateway down. It stands twice: outermost,
// for a panic in the gateway's own steps; and just above execute, where a
// panicking tool's failure is recorded by the steps above like any other.
type recoverStep struct{ log *slog.Logger }

func (s recoverStep) wrap(next Handler) Handler {
	log := s.log
	return func(ctx context.Context, r *Request) (res *Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				// The panic's value may hold argument values: like an
				// error's text, it is logged as a hash (toolresult.ErrorAttrs).
				log.Error("tool panicked", "tool", r.Entry.Canonical, "panic_type", fmt.Sprintf("%T", p),
					"panic_hash", toolresult.TextHash(fmt.Sprint(p)), "stack", string(debug.Stack()))
				res, err = nil, &legate.Error{Code: legate.CodeAdapterMapping, Message: fmt.Sprintf("tool %s failed unexpectedly", r.Entry.Canonical)}
			}
		}()
		return next(ctx, r)
	}
}

// observeStep writes one audit row and the metrics of every call, whatever
// happens below, its latency measured around all of it, and the call's
// trace span. A round of a multi-round-trip call that asks for input is
// not a call's end: its last round records the call. A call handed back
// to the SDK is recorded by the SDK's run of it.
type observeStep struct{ g *Gateway }

func (s observeStep) wrap(next Handler) Handler {
	g := s.g
	return func(ctx context.Context, r *Request) (*Result, error) {
		note := &replayNote{}
		ctx = g.tracer.StartCall(ctx, r.Entry.Canonical, r.Caller.Principal, r.Caller.Tenant, r.Start)
		res, err := next(context.WithValue(ctx, replayNoteKey{}, note), r)
		if err == errHandBack {
			g.tracer.EndCall(ctx, telemetry.HandedBack) // the SDK's run of the call records it
			return nil, err
		}
		if err == nil && res.needsInput() {
			return res, err // the call's last round records it
		}
		if note.approvalID != "" {
			r.Replay, r.ApprovalID = true, note.approvalID
		}
		latency := time.Since(r.Start)
		source := sourceOf(r)
		outcome := outcomeCode(res, err)
		g.metrics.Called(r.Entry.Canonical, source, outcome, latency)
		row := store.AuditRow{
			Time: r.Start, Principal: r.Caller.Principal, Tenant: r.Caller.Tenant, Session: r.Caller.Session, Profile: r.approved.ProfileOr(r.principal.Via()),
			Tool: r.Entry.Canonical, Source: source, Class: string(r.Class),
			Decision: string(r.Decision.Action), Rule: r.Decision.RuleName(r.Class), ApprovalID: r.ApprovalID,
			Outcome: outcome, Latency: latency, ArgsHash: r.ArgsHash, ResultSize: int(res.size()),
		}
		if r.Replay {
			row.Decision = decisionReplay
			row.Detail = fmt.Sprintf("the stored outcome of approval %s, which ran once already; the tool did not run again", r.ApprovalID)
		}
		g.tracer.EndCall(ctx, outcome, "source", source, "class", row.Class, "decision", row.Decision, "rule", row.Rule, "approval_id", row.ApprovalID)
		g.audit.Add(row)
		return res, err
	}
}

// roundsStep carries multi-round-trip calls: a retry's request state
// identifies the logical call it continues (package rounds tells how). It
// opens the request state a retry carries (refusing one that does not
// open), which restores the logical call's id, start and decision, so that
// policy and approval apply to its first round (decideStep) and one audit
// row to its last (observeStep); and it seals the state of a result that
// asks for input.
type roundsStep struct{ sealer *rounds.Sealer }

func (s roundsStep) wrap(next Handler) Handler {
	return func(ctx context.Context, r *Request) (*Result, error) {
		if r.round != nil && r.stateToken != "" {
			st, err := s.sealer.Open(r.stateToken, subjectOfRound(r))
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
		return s.seal(res, st, subjectOfRound(r))
	}
}

// seal replaces the request state of res, which asks for input, with
// one Legate issues, holding the upstream's.
func (s roundsStep) seal(res *Result, st rounds.State, subject string) (*Result, error) {
	seal := func(up string) string { st.Upstream = up; return s.sealer.Seal(st, subject) }
	if res.MCP != nil {
		res.MCP.RequestState = seal(res.MCP.RequestState)
		return res, nil
	}
	var err error
	res.Raw, err = rounds.Reseal(res.Raw, seal)
	return res, err
}

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

// logStep logs each call's outcome and latency at debug level, and
// failures other than the caller's own mistakes at warn. A failure is
// logged by its code and a hash of its text (toolresult.ErrorAttrs),
// never the text.
type logStep struct{ log *slog.Logger }

func (s logStep) wrap(next Handler) Handler {
	log := s.log
	return func(ctx context.Context, r *Request) (*Result, error) {
		res, err := next(ctx, r)
		if err == errHandBack {
			return nil, err
		}
		if err == nil {
			if log.Enabled(ctx, slog.LevelDebug) {
				log.Debug("call", "tool", r.Entry.Canonical, "class", r.Class, "principal", r.Caller.Principal, "latency", time.Since(r.Start))
			}
			return res, nil
		}
		if toolresult.ProtocolError(err) != nil {
			log.Debug("call refused by upstream", append([]any{"tool", r.Entry.Canonical}, toolresult.ErrorAttrs(err)...)...)
			return nil, err
		}
		level := slog.LevelWarn
		switch legate.CodeOf(err) {
		case legate.CodeInvalidArgument, legate.CodeApprovalPending, legate.CodePolicyDenied, legate.CodeApprovalDenied, legate.CodeRateLimited:
			level = slog.LevelInfo // the gateway working as configured, or the caller's mistake
		}
		attrs := append([]any{"tool", r.Entry.Canonical, "class", r.Class, "principal", r.Caller.Principal}, toolresult.ErrorAttrs(err)...)
		log.Log(ctx, level, "call failed", append(attrs, "latency", time.Since(r.Start))...)
		return nil, err
	}
}

// limitStep fails a call over a rate limit of limits: at once, with
// RATE_LIMITED and the time until it would be let through as RetryAfter,
// and one over a budget of budgets: with QUOTA_EXCEEDED and the time its
// window ends (package quota); the call's result is charged to the budgets
// after. It stands below observe, so refused calls are audited and
// counted, and above decide, so they are neither held for approval nor
// run; a call the fast path hands back for approval gives its turn back,
// which the SDK's run of it takes. A request already approved was let
// through when it was made and is not limited or counted again. With no
// limits or budgets set, the gate is nil and admits every call.
type limitStep struct{ gate func() *quota.Gate }

func (s limitStep) wrap(next Handler) Handler {
	gate := s.gate
	return func(ctx context.Context, r *Request) (*Result, error) {
		t, err := gate().Admit(ctx, quota.Call{Tenant: r.Caller.Tenant, Principal: r.Caller.Principal, Tool: r.Entry.Canonical,
			Write: r.Class.Rank() >= legate.ClassWrite.Rank(), Approved: r.approved != nil, Counted: r.cont != nil || r.system})
		if err != nil {
			return nil, err
		}
		res, err := next(ctx, r)
		t.Done(ctx, res.size(), err == errHandBack)
		return res, err
	}
}

// decideStep is the policy step: the policy in use allows, denies, or holds
// the call for approval (policy.Executor: waiting for a decision, then
// running it exactly once). A call on the fast path that needs approval is
// handed back (errHandBack) before anything is written.
type decideStep struct {
	policy    func() *policy.Policy // the policy in use now
	metrics   *audit.Metrics
	approvals *policy.Executor
	discovery *profiles.Discovery // the credential set a held call records
	tasks     *tasks.Tasks        // a held call of a client of the tasks extension is a task
}

func (s decideStep) wrap(next Handler) Handler {
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
			// A later round of a call this step let through (roundsStep).
			if r.relay != nil {
				r.relay.Keep()
			}
			return next(ctx, r)
		default:
			r.Decision = s.policy().Decide(subjectOf(r))
		}
		d := r.Decision
		if r.relay != nil {
			if d.Action == policy.Approve && !tasks.Wanted(r.round) || d.Action != policy.Approve && r.heldOnly { // a task is answered here
				return nil, errHandBack
			}
			r.relay.Keep()
		}
		s.metrics.Decisions.WithLabelValues(string(d.Action)).Inc()
		spans.Event(ctx, "policy.decision", "action", string(d.Action))
		switch d.Action {
		case policy.Deny:
			reason := d.Reason
			if reason == "" {
				reason = "denied by policy " + d.RuleName(r.Class)
			}
			return nil, &legate.Error{Code: legate.CodePolicyDenied, Message: fmt.Sprintf("%s: %s", r.Entry.Canonical, reason)}
		case policy.Approve:
			return s.hold(ctx, r, next)
		}
		return next(ctx, r)
	}
}

// hold has the executor hold call r for approval, next running it once approved.
func (s decideStep) hold(ctx context.Context, r *Request, next Handler) (*Result, error) {
	h := policy.Held{Entry: r.Entry, Args: r.Args, Caller: r.Caller, Class: r.Class, ArgsHash: r.ArgsHash,
		Confirm: r.Decision.Confirm, Session: r.Session, ProgressToken: r.ProgressToken, Profile: r.principal.Via(), CredentialSet: s.discovery.CredentialsName(r.principal, r.Entry.SourceID()),
		Bound: func(id string) { r.ApprovalID, r.OperationID = id, id },
		Run: func(ctx context.Context) (*mcp.CallToolResult, error) {
			res, err := next(ctx, r)
			if err != nil {
				return nil, err
			}
			return res.MCP, nil
		}}
	if r.relay != nil { // a client of the tasks extension (above): the call is the task of its request
		raw, err := s.tasks.Create(ctx, r.round, h.Confirm, func(ctx context.Context) (*store.Approval, error) { return s.approvals.Open(ctx, h) })
		return &Result{Raw: raw}, err
	}
	res, replay, err := s.approvals.Hold(ctx, h)
	r.Replay = replay
	if err != nil {
		return nil, err
	}
	return decoded(res), nil
}

// subjectOf is what policy rules match of a call.
func subjectOf(r *Request) policy.Subject {
	s := policy.Subject{Principal: r.Caller.Principal, Tenant: r.Caller.Tenant, Tool: r.Entry.Canonical, Class: r.Class}
	switch t := r.Entry.Target.(type) {
	case *instances.Tool:
		if t.Inst != nil {
			s.Connector = t.Inst.Def.ID
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

// executeStep runs the tool at its source: a native connector within
// call_timeout, or the upstream within its own timeout (extended by
// progress), asking the user to connect where the profile says auto_auth.
// What it returns is masked (masks.go).
type executeStep struct{ g *Gateway }

func (s executeStep) wrap(Handler) Handler { return s.execute }

// execute is the innermost handler.
func (s executeStep) execute(ctx context.Context, r *Request) (res *Result, err error) {
	g := s.g
	ctx, span := spans.Step(ctx, "execute")
	defer span.End()
	defer func() {
		res, err = maskResult(g.masks.Secrets(), res, err)
		mark(r, res, g.now().cfg.Results.Spotlight)
	}()
	switch t := r.Entry.Target.(type) {
	case *instances.Tool:
		res, err := s.native(ctx, t, r)
		return decoded(res), err
	case *upstream.Tool:
		c := upstream.Client{Session: r.Session, ProgressToken: r.ProgressToken, Round: r.round, Tenant: r.Caller.Tenant, Principal: r.Caller.Principal}
		if r.relay != nil { // a client of the tasks extension may get the upstream's own task (package tasks)
			c.Progress, c.Tasks = r.relay.Progress, tasks.Wanted(r.round)
		}
		rel, res, err := s.callUpstream(ctx, t, r, c)
		if t.PerPrincipal && s.asksToConnect(r, err) {
			actx, cancel := context.WithTimeout(ctx, g.upstreams.Timeout(t)) // the wait for the connection
			again, ir, aerr := g.connections.AutoAuth(actx, err, t.Upstream, r.Caller, connections.Asker{Session: r.Session, Round: r.round})
			cancel()
			if !again {
				return decoded(ir), aerr
			}
			rel, res, err = s.callUpstream(ctx, t, r, c)
		}
		if rel.JSON == nil {
			return decoded(res), err
		}
		if c.Tasks && rel.Task { // the upstream's own task
			if rel.JSON, err = g.tasks.Hand(ctx, t.Upstream, r.Entry.Canonical, tasks.Caller{Principal: r.Caller.Principal, Tenant: r.Caller.Tenant}, rel.JSON); err != nil {
				return nil, err
			}
		}
		return relayed(rel), nil
	}
	return nil, fmt.Errorf("tool %s has no executor", r.Entry.Canonical)
}

// native runs a native tool within the call timeout.
func (s executeStep) native(ctx context.Context, nt *instances.Tool, r *Request) (*mcp.CallToolResult, error) {
	g := s.g
	call := &connectors.Call{
		Tool:        nt.Tool.Name,
		Args:        r.Args,
		Caller:      r.Caller,
		OperationID: r.OperationID,
		Credentials: sources.Credentials{},
		Retried:     func(reason string) { g.metrics.Retried(r.Entry.Canonical, reason) },
	}
	if nt.Inst != nil {
		creds := nt.Inst.Creds.Picking(nt.Inst.Def, r.approved.CredentialSetOr(g.discovery.CredentialsName(r.principal, nt.Inst.Def.ID))) // the profile's credentials_name
		creds.Tenant = r.Caller.Tenant
		call.Credentials = g.connections.Credentials(nt.Inst.Def, creds, r.Caller)
		g.kit.ForCall(ctx, nt.Inst.Def.ID, call)
	} else {
		ctx = profiles.WithCaller(ctx, r.principal, r.Session)
	}
	timeout := g.now().callTimeout
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := nt.Run(ctx, call)
	if nt.Inst != nil && s.asksToConnect(r, err) {
		again, ir, aerr := g.connections.AutoAuth(ctx, err, nt.Inst.Def.ID, r.Caller, connections.Asker{Session: r.Session, Round: r.round})
		if !again {
			return ir, aerr
		}
		res, err = nt.Run(ctx, call)
	}
	g.metrics.NativeEnded(r.Entry.Canonical, err)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, &legate.Error{Code: legate.CodeTimeout, Message: fmt.Sprintf("%s did not answer within %s", r.Entry.Canonical, timeout), Err: err}
		}
		return nil, err
	}
	if res != nil {
		spans.Items(ctx, res.Structured) // a list's items, on the call's trace
	}
	return toolresult.Native(res)
}

// callUpstream makes call r to t as c: relayed as bytes on the fast path
// (rel.JSON set when it could be).
func (s executeStep) callUpstream(ctx context.Context, t *upstream.Tool, r *Request, c upstream.Client) (rel upstream.Relayed, res *mcp.CallToolResult, err error) {
	g := s.g
	if t.PerPrincipal {
		c.Round = connections.ForSource(c.Round)
	}
	if r.relay == nil {
		res, err = g.upstreams.Call(ctx, t, r.Args, c)
		return rel, res, err
	}
	return g.upstreams.Relay(ctx, t, r.Args, c)
}

// asksToConnect reports whether call r, which failed with err, asks its
// user to connect (auto_auth, which a session's fast path cannot ask).
func (s executeStep) asksToConnect(r *Request, err error) bool {
	return legate.CodeOf(err) == legate.CodeNotConnected && s.autoAuth(r) && (r.relay == nil || r.Session == nil)
}

// autoAuth reports whether r's profile asks its user to connect
// (auto_auth); the fast path asks it too (fastable), as it takes only the
// calls that cannot ask.
func (s executeStep) autoAuth(r *Request) bool {
	prof := config.Profile{}
	if p := s.g.discovery.WithDefault(r.principal); p != nil {
		prof, _ = s.g.now().cfg.ProfileNamed(p.Profile)
	}
	return prof.AsksToConnect()
}
