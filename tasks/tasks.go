// Package tasks offers a call that policy holds for approval as an MCP
// task (the io.modelcontextprotocol/tasks extension of protocol
// 2026-07-28, SEP-2663) to a client that negotiates it in its request's
// _meta.
//
// The task is the approval request itself: there is no second record. Its
// id is the approval's id with a signature binding it to the principal
// and tenant that made the call (under a key every replica derives the
// same), so a task id is good only for its caller, on any replica and
// after a restart. Its status is read from the approval's state:
//
//	pending (unexpired), approved, executing   → working
//	pending, for its caller to confirm         → input_required (confirm.go)
//	executed, failed (the run's stored result) → completed, the result inlined
//	denied, expired                            → failed, with an error
//	denied by its caller's tasks/cancel        → cancelled
//
// An approved request is run by the approval executor exactly once
// (policy.Executor.RunApproved), whoever asks for the task and wherever.
//
// Serve answers the task methods of a stateless HTTP request before the
// go-sdk sees them (the SDK implements no tasks): tasks/get (the task,
// its result inlined once terminal), tasks/cancel (withdraws a pending
// request; an empty ack), tasks/update (an empty ack; it carries the
// caller's confirmation, if asked for); tasks/result and tasks/list, which
// SEP-2663 removed, are method-not-found. A request that does not declare
// the extension in its _meta gets -32021 for them; a task of another
// caller, or none, -32602.
//
// An upstream's own task, answered to a call Legate relays, is handed
// through to the client under an id of Legate's (handed.go).
package tasks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/legate-mcp/legate/rounds"
	"github.com/legate-mcp/legate/store"
)

// Extension is the identifier a client declares in
// _meta["io.modelcontextprotocol/clientCapabilities"].extensions and the
// server in capabilities.extensions.
const Extension = "io.modelcontextprotocol/tasks"

// capabilitiesKey holds a stateless request's client capabilities in its _meta.
const capabilitiesKey = "io.modelcontextprotocol/clientCapabilities"

// PollInterval is the interval a task suggests to its client between two
// tasks/get.
const PollInterval = time.Second

// Statuses of a task (SEP-2663).
const (
	Working       = "working"
	InputRequired = "input_required"
	Completed     = "completed"
	Failed        = "failed"
	Cancelled     = "cancelled"
)

// CancelReason is the reason recorded on a request its caller withdrew by
// tasks/cancel: such a denial is the status cancelled.
const CancelReason = "cancelled by the caller (tasks/cancel)"

// Wanted reports whether a 2026-07-28 round's _meta declares the
// extension (nil: a request of another era, which never does).
func Wanted(r *rounds.Round) bool {
	return r != nil && Declared(r.Meta)
}

// Declared reports whether a request's _meta (JSON) declares the
// extension among its client capabilities.
func Declared(meta json.RawMessage) bool {
	var m map[string]json.RawMessage
	if !bytes.Contains(meta, []byte(`/tasks"`)) && bytes.IndexByte(meta, '\\') < 0 {
		return false // the usual case, read no further; a name written with escapes is decoded
	}
	if json.Unmarshal(meta, &m) != nil {
		return false
	}
	var caps struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(m[capabilitiesKey], &caps) != nil {
		return false
	}
	_, ok := caps.Extensions[Extension]
	return ok
}

// Options are what Tasks needs of the gateway.
type Options struct {
	// Key returns the key task ids are signed with: the same on every
	// replica sharing the store, and after a restart.
	Key func(ctx context.Context) []byte
	// Principal is the caller of a request without authentication.
	Principal string
	// Decide records a decision as every decision is recorded (audited and
	// measured): tasks/cancel denies the request with CancelReason.
	Decide func(ctx context.Context, id string, approve bool, decider, tenant, reason string) error
	// SeparateApprover is approvals.separate_approver: a caller never
	// decides its own request, in the client either.
	SeparateApprover bool
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Result is a completed task's result as tasks/get inlines it, given
	// the held call's result as it was stored: the result of a 2026-07-28
	// request, as the call would have been answered at once (resultType
	// complete, the server named in its _meta). nil inlines it as stored.
	Result func(stored json.RawMessage) json.RawMessage
	// Upstreams sends the client's requests about an upstream's task
	// handed through to that upstream (handed.go); nil: none is.
	Upstreams Upstreams
	// Present is a handed-through task's completed result as its client
	// gets it: masked and marked as the call's own result would be.
	Present func(upstream, tool string, result json.RawMessage) json.RawMessage
	// Record records an audit row: the end of a handed-through task.
	Record func(store.AuditRow)
}

// Tasks are the approval requests of held calls, seen as tasks.
type Tasks struct {
	st        store.ApprovalStore
	o         Options
	seenEnded *lru.Cache[string, struct{}] // handed-through tasks seen ended
}

// endedKept bounds the handed-through tasks remembered as ended.
const endedKept = 4096

// New returns the tasks over the approval store st.
func New(st store.ApprovalStore, o Options) *Tasks {
	if o.Now == nil {
		o.Now = time.Now
	}
	seen, _ := lru.New[string, struct{}](endedKept)
	return &Tasks{st: st, o: o, seenEnded: seen}
}

// firstEnd reports whether handed-through task h is seen ended for the
// first time (by this process, among the last endedKept).
func (t *Tasks) firstEnd(h Handed) bool {
	seen, _ := t.seenEnded.ContainsOrAdd(h.Upstream+"\x00"+h.TaskID, struct{}{})
	return !seen
}

// Caller is who asks for a task: the principal and tenant a held call's
// approval request is bound to.
type Caller struct{ Principal, Tenant string }

// idPrefix starts every task id this version of Legate issues.
const idPrefix = "lgt1."

// confirmMode marks, after idPrefix, the id of a task whose request its
// caller may decide in the client (confirm.go).
const confirmMode = "c."

// ID is the task id of approval request a for its caller, decided in the
// inbox.
func (t *Tasks) ID(ctx context.Context, a *store.Approval) string { return t.id(ctx, a, false) }

// id is the task id of approval request a for its caller; confirm: its
// caller may decide it in the client. The mode is signed with the id.
func (t *Tasks) id(ctx context.Context, a *store.Approval, confirm bool) string {
	mode := ""
	if confirm {
		mode = confirmMode
	}
	return idPrefix + mode + a.ID + "." + t.sign(ctx, mode+a.ID, Caller{a.Principal, a.Tenant})
}

// sign is the signature binding approval id to c.
func (t *Tasks) sign(ctx context.Context, id string, c Caller) string {
	mac := hmac.New(sha256.New, t.o.Key(ctx))
	for _, p := range []string{id, c.Principal, c.Tenant} {
		mac.Write([]byte(p))
		mac.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:18])
}

// ErrUnknown is the error of a task id that names no task of its caller:
// malformed, signed for another caller, or its request gone. The caller
// answers -32602 (invalid params), as SEP-2663 asks for an unknown task.
var ErrUnknown = errors.New("no such task")

// open returns the approval request task id names for c, and whether c
// may decide it in the client.
func (t *Tasks) open(ctx context.Context, id string, c Caller) (a *store.Approval, confirm bool, err error) {
	rest, ok := strings.CutPrefix(id, idPrefix)
	mode := ""
	if rest, confirm = strings.CutPrefix(rest, confirmMode); confirm {
		mode = confirmMode
	}
	approval, sig, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || !hmac.Equal([]byte(sig), []byte(t.sign(ctx, mode+approval, c))) {
		return nil, false, ErrUnknown
	}
	a, err = t.st.Get(ctx, approval)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, false, ErrUnknown
	case err != nil:
		return nil, false, err
	case a.Principal != c.Principal || a.Tenant != c.Tenant:
		return nil, false, ErrUnknown
	}
	return a, confirm, nil
}

// Task is a task on the wire (SEP-2663's Task, and DetailedTask's result
// or error once terminal).
type Task struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          int64           `json:"ttlMs"`
	PollIntervalMs int64           `json:"pollIntervalMs"`
	Content        json.RawMessage `json:"content,omitempty"`
	InputRequests  json.RawMessage `json:"inputRequests,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          *Error          `json:"error,omitempty"`
}

// Error is a failed task's error: a JSON-RPC error object.
type Error struct {
	Code    int64          `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

// CodeNotApproved is the error code of a task whose request was denied or
// expired undecided: a server error of JSON-RPC's implementation-defined
// range; its data names the class (APPROVAL_DENIED) and the approval id.
const CodeNotApproved = -32000

// Created is the CreateTaskResult (resultType task) of a's task. It
// carries content too, a text saying what the task waits for: the core
// schema of 2026-07-28 types every tools/call result as a CallToolResult,
// which requires content, and a reader of the result alone (a log, a
// proxy) learns from it what happened to the call.
func (t *Tasks) Created(ctx context.Context, a *store.Approval) json.RawMessage {
	return t.created(ctx, a, false)
}

// created is Created of a task its caller may decide in the client (confirm) or not.
func (t *Tasks) created(ctx context.Context, a *store.Approval, confirm bool) json.RawMessage {
	task := t.task(ctx, a, confirm)
	text := task.StatusMessage
	if text == "" {
		text = a.Tool + " ran"
	}
	task.Content, _ = json.Marshal([]map[string]string{{"type": "text", "text": text + "; follow task " + task.TaskID + " with tasks/get"}})
	task.ResultType, task.Result, task.Error, task.InputRequests = "task", nil, nil, nil // those are tasks/get's
	b, _ := json.Marshal(task)
	return b
}

// Create opens the approval request of a held call with open and returns
// its task's CreateTaskResult (Created). confirm is where the policy rule
// asks for the approval (policy.Decision.Confirm): with confirm: client,
// a caller whose round declares elicitation decides in the client
// (confirm.go).
func (t *Tasks) Create(ctx context.Context, round *rounds.Round, confirm string, open func(context.Context) (*store.Approval, error)) (json.RawMessage, error) {
	a, err := open(ctx)
	if err != nil {
		return nil, err
	}
	return t.created(ctx, a, t.confirmable(round, confirm)), nil
}

// task is a's task as tasks/get shows it.
func (t *Tasks) task(ctx context.Context, a *store.Approval, confirm bool) Task {
	updated := a.CreatedAt
	if a.DecidedAt.After(updated) {
		updated = a.DecidedAt
	}
	task := Task{ResultType: "complete", TaskID: t.id(ctx, a, confirm), CreatedAt: a.CreatedAt.UTC().Format(time.RFC3339Nano),
		LastUpdatedAt: updated.UTC().Format(time.RFC3339Nano), TTLMs: max(a.ExpiresAt.Sub(a.CreatedAt).Milliseconds(), 1),
		PollIntervalMs: PollInterval.Milliseconds()}
	task.Status, task.StatusMessage = Status(a, t.o.Now())
	if confirm && task.Status == Working && a.State == store.StatePending {
		task.Status, task.StatusMessage, task.InputRequests = InputRequired, a.Tool+" waits for its caller's confirmation", confirmRequest(a)
	}
	switch task.Status {
	case Completed:
		task.Result = a.Outcome
		if t.o.Result != nil {
			task.Result = t.o.Result(a.Outcome)
		}
	case Failed:
		task.Error = &Error{Code: CodeNotApproved, Message: task.StatusMessage, Data: map[string]any{"class": "APPROVAL_DENIED", "approval_id": a.ID}}
	}
	return task
}

// Status is the task status of approval request a at now, with a message
// for the client.
func Status(a *store.Approval, now time.Time) (status, message string) {
	switch a.State {
	case store.StatePending:
		if !a.ExpiresAt.After(now) {
			return Failed, fmt.Sprintf("approval %s of %s expired undecided", a.ID, a.Tool)
		}
		return Working, fmt.Sprintf("%s waits for approval %s until %s", a.Tool, a.ID, a.ExpiresAt.UTC().Format(time.RFC3339))
	case store.StateApproved, store.StateExecuting:
		return Working, fmt.Sprintf("%s was approved by %s and runs", a.Tool, a.Decider)
	case store.StateExecuted, store.StateFailed:
		return Completed, ""
	case store.StateDenied:
		if a.Reason == CancelReason && a.Decider == canceller(a.Principal) {
			return Cancelled, fmt.Sprintf("approval %s was withdrawn by its caller", a.ID)
		}
		msg := fmt.Sprintf("%s was denied by %s", a.Tool, a.Decider)
		if a.Reason != "" {
			msg += ": " + a.Reason
		}
		return Failed, msg
	}
	return Failed, fmt.Sprintf("approval %s of %s expired undecided", a.ID, a.Tool)
}

// canceller is the decider of the denial by which principal withdraws its
// own request: named apart from principal, as a confirmation in the client
// is, because separate_approver forbids a caller only to approve.
func canceller(principal string) string { return principal + " (tasks/cancel)" }

// Cancel withdraws task id of c: its request, if still pending, is denied
// with CancelReason; a task already decided or terminal is left as it is
// (an idempotent cancel).
func (t *Tasks) Cancel(ctx context.Context, id string, c Caller) error {
	a, _, err := t.open(ctx, id, c)
	if err != nil {
		return err
	}
	if a.State != store.StatePending || !a.ExpiresAt.After(t.o.Now()) {
		return nil
	}
	err = t.o.Decide(ctx, a.ID, false, canceller(c.Principal), c.Tenant, CancelReason)
	if errors.Is(err, store.ErrConflict) {
		return nil // decided meanwhile: that decision stands
	}
	return err
}

// Get returns the tasks/get result of task id for c.
func (t *Tasks) Get(ctx context.Context, id string, c Caller) (json.RawMessage, error) {
	a, confirm, err := t.open(ctx, id, c)
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(t.task(ctx, a, confirm))
	return b, nil
}
