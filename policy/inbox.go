package policy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/store"
)

// ApprovalsConfig is the `approvals:` section of config.yaml; its tags
// are its spec (see package config).
type ApprovalsConfig struct {
	Wait             legate.Duration `yaml:"wait" default:"30s" min:"0" desc:"How long a call blocks for a decision before it returns APPROVAL_PENDING"`
	Expire           legate.Duration `yaml:"expire" default:"24h" min:"0" desc:"How long a request can be decided; an executed request's outcome is returned to the same call (same arguments) that long"`
	SeparateApprover bool            `yaml:"separate_approver" default:"false" desc:"Forbid a caller to approve its own request"`
	Notify           string          `yaml:"notify" desc:"The tool that receives every new request, by canonical name, or a connector instance whose send tool does (a webhook's id); it runs through the call path as legate:system"`
}

// Defaults of the approvals section.
const (
	DefaultWait   = 30 * time.Second
	DefaultExpire = 24 * time.Hour
)

// WaitTime is the configured wait or its default.
func (c ApprovalsConfig) WaitTime() time.Duration {
	if c.Wait > 0 {
		return time.Duration(c.Wait)
	}
	return DefaultWait
}

// ExpireTime is the configured expiry or its default.
func (c ApprovalsConfig) ExpireTime() time.Duration {
	if c.Expire > 0 {
		return time.Duration(c.Expire)
	}
	return DefaultExpire
}

// ErrSelfApproval is returned when separate_approver forbids the decider.
var ErrSelfApproval = errors.New("separate_approver is set: a caller may not decide its own request")

// Inbox is the durable approval inbox: requests are rows in the store and
// every state change is a compare-and-set there, so a request is decided
// once and executed once across goroutines, processes and restarts.
type Inbox struct {
	st  store.ApprovalStore
	cfg ApprovalsConfig
	now func() time.Time

	mu      sync.Mutex
	waiters map[string]*waiter // by approval id

	poll    time.Duration                  // PollInterval but in tests
	beat    time.Duration                  // HeartbeatInterval but in tests
	onError func(op, id string, err error) // see OnError
}

// NewInbox returns an inbox on st.
func NewInbox(st store.ApprovalStore, cfg ApprovalsConfig) *Inbox {
	return &Inbox{st: st, cfg: cfg, now: time.Now, waiters: map[string]*waiter{}, poll: PollInterval, beat: HeartbeatInterval}
}

// OnError sets what is told of the errors no caller gets back: a running
// call's failed heartbeat (op "heartbeat", with the approval's id). Such
// an error must not go unseen: heartbeats missed for StaleAfter let any
// process mark the still-running call failed. Set it before use.
func (in *Inbox) OnError(f func(op, id string, err error)) { in.onError = f }

func (in *Inbox) report(op, id string, err error) {
	if in.onError != nil {
		in.onError(op, id, err)
	}
}

// Config returns the approvals configuration.
func (in *Inbox) Config() ApprovalsConfig { return in.cfg }

// Store returns the approval store.
func (in *Inbox) Store() store.ApprovalStore { return in.st }

// waiter is the wake-up of the calls waiting for one request.
type waiter struct {
	ch chan struct{} // closed when the request may have changed
	n  int           // the calls holding ch
}

// changed wakes the calls waiting for request id to re-read it; "" wakes
// every waiting call.
func (in *Inbox) changed(id string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for wid, w := range in.waiters {
		if id == "" || wid == id {
			close(w.ch)
			delete(in.waiters, wid)
		}
	}
}

// waitFor returns a channel closed when request id may have changed, and
// the release the caller calls once it no longer waits on it.
func (in *Inbox) waitFor(id string) (<-chan struct{}, func()) {
	in.mu.Lock()
	defer in.mu.Unlock()
	w, ok := in.waiters[id]
	if !ok {
		w = &waiter{ch: make(chan struct{})}
		in.waiters[id] = w
	}
	w.n++
	return w.ch, func() {
		in.mu.Lock()
		defer in.mu.Unlock()
		if w.n--; w.n == 0 && in.waiters[id] == w {
			delete(in.waiters, id)
		}
	}
}

// Follow wakes waiting calls as soon as their requests change in another
// process, until ctx ends, when the store can tell (a
// store.ApprovalWatcher: PostgreSQL's, shared by replicas); it returns at
// once otherwise, and then as with it, Await's polling is what sees the
// changes made elsewhere. A serving gateway runs it for its whole life.
func (in *Inbox) Follow(ctx context.Context) {
	w, ok := in.st.(store.ApprovalWatcher)
	if !ok {
		return
	}
	for id := range w.Watch(ctx) {
		in.changed(id)
	}
}

// Open returns the live request bound to a, creating a pending one when
// there is none (created reports which). Live means unexpired or, once
// decided, created within the expiry window: calling again with the same
// arguments finds the same request and its outcome.
func (in *Inbox) Open(ctx context.Context, a *store.Approval) (req *store.Approval, created bool, err error) {
	now := in.now()
	a.ID = newID()
	a.CreatedAt = now
	a.ExpiresAt = now.Add(in.cfg.ExpireTime())
	// One step in the store: the same call made again at once, through
	// this process or another, shares the request rather than opening a
	// second one that could be approved and run too.
	return in.st.Open(ctx, a, now.Add(-in.cfg.ExpireTime()), now)
}

func newID() string {
	b := make([]byte, 10)
	rand.Read(b)
	return "ap_" + hex.EncodeToString(b)
}

// Decide approves or denies a pending request for decider.
func (in *Inbox) Decide(ctx context.Context, id string, approve bool, decider, reason string) (*store.Approval, error) {
	if in.cfg.SeparateApprover {
		a, err := in.st.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if a.Principal == decider {
			return a, ErrSelfApproval
		}
	}
	a, err := in.st.Decide(ctx, id, approve, decider, reason, in.now())
	if err == nil {
		in.changed(id)
	}
	return a, err
}

// Settled reports whether a request needs no more waiting: executed,
// failed, denied or expired.
func Settled(a *store.Approval, now time.Time) bool {
	switch a.State {
	case store.StateExecuted, store.StateFailed, store.StateDenied, store.StateExpired:
		return true
	case store.StatePending:
		return !a.ExpiresAt.After(now)
	}
	return false
}

// PollInterval is how often a waiting call re-reads its request: what
// wakes it when a change made in another process is not told (a store
// that cannot watch, such as SQLite's, or a watch reconnecting).
const PollInterval = 250 * time.Millisecond

// Await re-reads the request until it is approved (and unclaimed) or
// settled, or until wait passes; tick is called about every second while
// it waits (for progress notifications). Changes made in this process
// wake it at once, as do those made in others when Follow runs on a store
// that tells of them; otherwise it sees them within PollInterval.
func (in *Inbox) Await(ctx context.Context, id string, wait time.Duration, tick func()) (*store.Approval, error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	poll := time.NewTicker(in.poll)
	defer poll.Stop()
	lastTick := in.now()
	for {
		wake, release := in.waitFor(id)
		a, err := in.st.Get(ctx, id)
		if err != nil {
			release()
			return nil, err
		}
		if a.State == store.StateApproved || Settled(a, in.now()) {
			release()
			return a, nil
		}
		select {
		case <-ctx.Done():
			release()
			return a, ctx.Err()
		case <-deadline.C:
			release()
			return a, nil
		case <-wake:
		case <-poll.C:
		}
		release()
		if tick != nil && in.now().Sub(lastTick) >= time.Second {
			lastTick = in.now()
			tick()
		}
	}
}

// Execute claims an approved request and, if this caller won the claim,
// runs it with run and records the outcome: executed when run returned a
// result, failed when it returned an error (with outcomeOf(err) stored).
// won is false when another caller holds the claim; then nothing ran here.
func (in *Inbox) Execute(ctx context.Context, a *store.Approval, run func(context.Context) (json.RawMessage, error), failure func(error) json.RawMessage) (won bool, err error) {
	won, err = in.st.Claim(ctx, a.ID, in.now())
	if err != nil || !won {
		return false, err
	}
	defer in.changed(a.ID)
	// While it runs, a heartbeat shows the run is alive; a request whose
	// heartbeat stops (the process died) is failed by Recover. A failed
	// heartbeat is reported and tried again sooner, well within StaleAfter.
	stop := make(chan struct{})
	var beating sync.WaitGroup
	// The heartbeat ends before the outcome is stored: a beat after it would
	// find the run finished (a conflict, not a failure to report).
	stopBeating := sync.OnceFunc(func() { close(stop); beating.Wait() })
	defer stopBeating()
	beating.Go(func() {
		t := time.NewTimer(in.beat)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				next := in.beat
				if err := in.st.Heartbeat(context.WithoutCancel(ctx), a.ID, in.now()); err != nil {
					in.report("heartbeat", a.ID, err)
					next = in.beat / 5
				}
				t.Reset(next)
			}
		}
	})
	// The outcome is recorded even if the caller went away meanwhile.
	out, runErr := run(context.WithoutCancel(ctx))
	state := store.StateExecuted
	if runErr != nil {
		state, out = store.StateFailed, failure(runErr)
	}
	stopBeating()
	if err := in.st.Finish(context.WithoutCancel(ctx), a.ID, state, out); err != nil {
		return true, fmt.Errorf("approval %s ran but its outcome was not stored: %w", a.ID, err)
	}
	return true, nil
}

// HeartbeatInterval is how often a running approved call says it is alive;
// one silent for StaleAfter is taken for dead.
const (
	HeartbeatInterval = 5 * time.Second
	StaleAfter        = 4 * HeartbeatInterval
)

// Recover marks failed the requests that were executing in a process that
// stopped (no heartbeat for StaleAfter): they may have taken effect, so
// they are never run again. Approved requests not yet claimed are left for
// the executor to run.
func (in *Inbox) Recover(ctx context.Context, outcome json.RawMessage) (int, error) {
	n, err := in.st.FailInterrupted(ctx, in.now().Add(-StaleAfter), outcome)
	if n > 0 {
		in.changed("")
	}
	return n, err
}
