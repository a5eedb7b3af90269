package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
)

// racers is how many goroutines race for one transition.
const racers = 16

// race runs fn in racers goroutines started together and returns their
// results in order.
func race[T any](fn func(i int) T) []T {
	out := make([]T, racers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			<-start
			out[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return out
}

// approved creates a request and approves it.
func approved(t *testing.T, as store.ApprovalStore, id string) *store.Approval {
	t.Helper()
	create(t, as, request(id, "bob", "", base))
	a, err := as.Decide(context.Background(), id, true, "alice", "", base.Add(time.Minute))
	must(t, err)
	return a
}

// claimed creates a request, approves it and claims it at at.
func claimed(t *testing.T, as store.ApprovalStore, id string, at time.Time) {
	t.Helper()
	approved(t, as, id)
	if won, err := as.Claim(context.Background(), id, at); err != nil || !won {
		t.Fatalf("claiming %s: %v %v", id, won, err)
	}
}

func approvalDecideOnce(t *testing.T, as store.ApprovalStore) {
	ctx := context.Background()
	create(t, as, request("ap_1", "bob", "", base))
	at := base.Add(time.Minute)
	a, err := as.Decide(ctx, "ap_1", true, "alice", "looks right", at)
	must(t, err)
	if a.State != store.StateApproved || a.Decider != "alice" || a.Reason != "looks right" || !a.DecidedAt.Equal(at) {
		t.Fatalf("decided: %+v", a)
	}
	// A second decision is refused and reports the first.
	a, err = as.Decide(ctx, "ap_1", false, "eve", "no", at.Add(time.Second))
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second decision: %v, want ErrConflict", err)
	}
	if a == nil || a.State != store.StateApproved || a.Decider != "alice" {
		t.Fatalf("a refused decision returns the request as it is: %+v", a)
	}
	if a := stateIs(t, as, "ap_1", store.StateApproved); a.Decider != "alice" || a.Reason != "looks right" {
		t.Fatalf("stored after a refused decision: %+v", a)
	}
	if _, err := as.Decide(ctx, "ap_nope", true, "alice", "", at); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deciding an unknown request: %v, want ErrNotFound", err)
	}

	// A request is decided only before it expires, even if not yet marked expired.
	late := create(t, as, request("ap_late", "bob", "", base))
	if _, err := as.Decide(ctx, "ap_late", true, "alice", "", late.ExpiresAt); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("deciding at expiry: %v, want ErrConflict", err)
	}
	stateIs(t, as, "ap_late", store.StatePending)

	create(t, as, request("ap_no", "bob", "", base))
	_, err = as.Decide(ctx, "ap_no", false, "alice", "not now", at)
	must(t, err)
	stateIs(t, as, "ap_no", store.StateDenied)
	if won, err := as.Claim(ctx, "ap_no", at); err != nil || won {
		t.Fatalf("claiming a denied request: %v %v, want not won", won, err)
	}
}

// However many approvers decide at once, one decision stands.
func approvalDecideRace(t *testing.T, as store.ApprovalStore) {
	create(t, as, request("ap_1", "bob", "", base))
	errs := race(func(i int) error {
		_, err := as.Decide(context.Background(), "ap_1", i%2 == 0, fmt.Sprint("approver-", i), "", base.Add(time.Minute))
		return err
	})
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("approvers %d and %d both decided", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, store.ErrConflict):
			t.Fatalf("approver %d: %v, want ErrConflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no approver decided")
	}
	a, err := as.Get(context.Background(), "ap_1")
	must(t, err)
	if a.Decider != fmt.Sprint("approver-", winner) {
		t.Fatalf("stored decider %q, want approver-%d", a.Decider, winner)
	}
}

// However many executors claim an approved request at once, exactly one
// runs it.
func approvalClaimRace(t *testing.T, as store.ApprovalStore) {
	ctx := context.Background()
	approved(t, as, "ap_1")
	type result struct {
		won bool
		err error
	}
	results := race(func(int) result {
		won, err := as.Claim(ctx, "ap_1", base.Add(2*time.Minute))
		return result{won, err}
	})
	winners := 0
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("claimer %d: %v", i, r.err)
		}
		if r.won {
			winners++
		}
	}
	if winners != 1 {
		t.Fatalf("%d of %d claimers won, want exactly 1", winners, racers)
	}
	stateIs(t, as, "ap_1", store.StateExecuting)
	if won, err := as.Claim(ctx, "ap_1", base.Add(3*time.Minute)); err != nil || won {
		t.Fatalf("claiming again: %v %v, want not won", won, err)
	}

	create(t, as, request("ap_pending", "bob", "", base))
	if won, err := as.Claim(ctx, "ap_pending", base); err != nil || won {
		t.Fatalf("claiming a pending request: %v %v, want not won", won, err)
	}
	stateIs(t, as, "ap_pending", store.StatePending)
	if won, _ := as.Claim(ctx, "ap_nope", base); won {
		t.Fatal("claimed an unknown request")
	}
}

func approvalFinish(t *testing.T, as store.ApprovalStore) {
	ctx := context.Background()
	claimed(t, as, "ap_ok", base)
	must(t, as.Heartbeat(ctx, "ap_ok", base.Add(time.Second)))
	out := []byte(`{"content":[{"type":"text","text":"posted"}]}`)
	must(t, as.Finish(ctx, "ap_ok", store.StateExecuted, out))
	if a := stateIs(t, as, "ap_ok", store.StateExecuted); !sameJSON(a.Outcome, out) {
		t.Fatalf("outcome %s, want %s", a.Outcome, out)
	}
	// A run is finished once: a second outcome is refused, the first kept.
	if err := as.Finish(ctx, "ap_ok", store.StateFailed, []byte(`{"isError":true}`)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("finishing again: %v, want ErrConflict", err)
	}
	if a := stateIs(t, as, "ap_ok", store.StateExecuted); !sameJSON(a.Outcome, out) {
		t.Fatalf("outcome after a refused finish %s, want %s", a.Outcome, out)
	}
	if err := as.Heartbeat(ctx, "ap_ok", base.Add(time.Minute)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("heartbeat of a finished run: %v, want ErrConflict", err)
	}

	claimed(t, as, "ap_fail", base)
	fail := []byte(`{"isError":true,"content":[{"type":"text","text":"boom"}]}`)
	must(t, as.Finish(ctx, "ap_fail", store.StateFailed, fail))
	if a := stateIs(t, as, "ap_fail", store.StateFailed); !sameJSON(a.Outcome, fail) {
		t.Fatalf("outcome %s, want %s", a.Outcome, fail)
	}

	// Only a claimed request finishes, and only as executed or failed.
	approved(t, as, "ap_unclaimed")
	if err := as.Finish(ctx, "ap_unclaimed", store.StateExecuted, out); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("finishing an unclaimed request: %v, want ErrConflict", err)
	}
	stateIs(t, as, "ap_unclaimed", store.StateApproved)
	claimed(t, as, "ap_running", base)
	if err := as.Finish(ctx, "ap_running", store.StatePending, out); err == nil {
		t.Fatal("finishing a run as pending: no error")
	}
	stateIs(t, as, "ap_running", store.StateExecuting)
	if err := as.Finish(ctx, "ap_nope", store.StateExecuted, out); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("finishing an unknown request: %v, want ErrNotFound", err)
	}
}

// A run whose heartbeat stopped is failed and never runs again: it may
// have taken effect.
func approvalFailInterrupted(t *testing.T, as store.ApprovalStore) {
	ctx := context.Background()
	claimed(t, as, "ap_dead", base)
	claimed(t, as, "ap_alive", base)
	must(t, as.Heartbeat(ctx, "ap_alive", base.Add(30*time.Second)))
	approved(t, as, "ap_waiting")
	create(t, as, request("ap_pending", "bob", "", base))
	out := []byte(`{"isError":true,"content":[{"type":"text","text":"interrupted"}]}`)

	if n, err := as.FailInterrupted(ctx, base, out); err != nil || n != 0 {
		t.Fatalf("a heartbeat at staleBefore is not stale: failed %d, %v", n, err)
	}
	if n, err := as.FailInterrupted(ctx, base.Add(20*time.Second), out); err != nil || n != 1 {
		t.Fatalf("failed %d, %v; want 1", n, err)
	}
	if a := stateIs(t, as, "ap_dead", store.StateFailed); !sameJSON(a.Outcome, out) {
		t.Fatalf("outcome %s, want %s", a.Outcome, out)
	}
	stateIs(t, as, "ap_alive", store.StateExecuting)
	stateIs(t, as, "ap_waiting", store.StateApproved)
	stateIs(t, as, "ap_pending", store.StatePending)

	if won, err := as.Claim(ctx, "ap_dead", base.Add(time.Minute)); err != nil || won {
		t.Fatalf("claiming an interrupted run: %v %v, want not won", won, err)
	}
	// The run that was failed finds out when it reports.
	if err := as.Heartbeat(ctx, "ap_dead", base.Add(time.Minute)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("heartbeat of a failed run: %v, want ErrConflict", err)
	}
	if err := as.Finish(ctx, "ap_dead", store.StateExecuted, []byte(`{}`)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("finishing a failed run: %v, want ErrConflict", err)
	}
	if a := stateIs(t, as, "ap_dead", store.StateFailed); !sameJSON(a.Outcome, out) {
		t.Fatalf("outcome after a late finish %s, want %s", a.Outcome, out)
	}
}
