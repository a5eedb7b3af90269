package policy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/store"
	_ "github.com/legate-mcp/legate/store/all" // the backends, by URL
	"github.com/legate-mcp/legate/store/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// never is a poll interval no test outlives: a call that returns was
// woken by something else.
const never = time.Hour

// bound is how long a call waits for its decision here: one not woken
// returns still pending once it passes, and the test fails.
const bound = 20 * time.Second

// told is an approval store that can watch, whose watch the test feeds,
// and which signals each read.
type told struct {
	store.ApprovalStore
	watch chan string
	reads chan *store.Approval
}

func (s *told) Watch(ctx context.Context) <-chan string { return s.watch }

func (s *told) Get(ctx context.Context, id string) (*store.Approval, error) {
	a, err := s.ApprovalStore.Get(ctx, id)
	if err == nil {
		s.reads <- a
	}
	return a, err
}

func pendingRequest(t *testing.T, in *policy.Inbox, args string) *store.Approval {
	t.Helper()
	a, _, err := in.Open(context.Background(), &store.Approval{Principal: "alice", Tool: "web.post", Class: "write",
		Args: json.RawMessage(args), ArgsHash: policy.ArgsHash(json.RawMessage(args))})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A change told by the store's watch wakes the call waiting for that
// request at once, without its poll; "" (changes may have been missed)
// wakes every waiting call.
func TestFollowWakesAWaitingCall(t *testing.T) {
	for name, say := range map[string]func(id string) string{
		"its id": func(id string) string { return id },
		"any":    func(string) string { return "" },
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			mem, err := store.Open(ctx, "sqlite://:memory:")
			if err != nil {
				t.Fatal(err)
			}
			defer mem.Close()
			st := &told{ApprovalStore: mem.Approvals(), watch: make(chan string), reads: make(chan *store.Approval, 64)}
			in := policy.NewInbox(st, policy.ApprovalsConfig{})
			policy.SetPoll(in, never)
			go in.Follow(ctx)
			a := pendingRequest(t, in, `{}`)
			got := make(chan *store.Approval)
			go func() {
				a, err := in.Await(ctx, a.ID, bound, nil)
				if err != nil {
					t.Error(err)
				}
				got <- a
			}()
			// It read the request pending: with no poll, only a wake makes it read again.
			for r := <-st.reads; r.State != store.StatePending; r = <-st.reads {
			}
			// Another process decides, behind this inbox's back.
			if _, err := mem.Approvals().Decide(ctx, a.ID, true, "bob", "", time.Now()); err != nil {
				t.Fatal(err)
			}
			st.watch <- "ap_someone_else" // wakes nobody waiting here
			st.watch <- say(a.ID)
			if a := <-got; a.State != store.StateApproved {
				t.Fatalf("woke with %s, want approved", a.State)
			}
		})
	}
}

// Without a watch, Follow returns and waiting calls poll.
func TestFollowWithoutAWatchReturns(t *testing.T) {
	mem, err := store.Open(context.Background(), "sqlite://:memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	policy.NewInbox(mem.Approvals(), policy.ApprovalsConfig{}).Follow(context.Background())
}

// listening is a watching approval store that tells of each request it
// read, and when its watch listens.
type listening struct {
	store.ApprovalStore
	reads   chan *store.Approval
	listens chan struct{}
}

func (s *listening) Get(ctx context.Context, id string) (*store.Approval, error) {
	a, err := s.ApprovalStore.Get(ctx, id)
	if err == nil {
		s.reads <- a
	}
	return a, err
}

func (s *listening) Watch(ctx context.Context) <-chan string {
	in, out := s.ApprovalStore.(store.ApprovalWatcher).Watch(ctx), make(chan string)
	go func() {
		defer close(out)
		for id := range in {
			out <- id
			if id == "" {
				s.listens <- struct{}{}
			}
		}
	}()
	return out
}

// Two replicas on one PostgreSQL database: a decision made through one's
// inbox wakes the call waiting on the other at once, told by the
// database (LISTEN/NOTIFY), not found by polling.
func TestDecisionOnOneReplicaWakesACallOnAnother(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := pgtest.URL(t)
	open := func() store.ApprovalStore {
		st, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st.Approvals()
	}
	st := &listening{ApprovalStore: open(), reads: make(chan *store.Approval, 64), listens: make(chan struct{}, 1)}
	a, b := policy.NewInbox(st, policy.ApprovalsConfig{}), policy.NewInbox(open(), policy.ApprovalsConfig{})
	policy.SetPoll(a, never)
	go a.Follow(ctx)
	<-st.listens
	for i := range 3 {
		req, _, err := b.Open(ctx, &store.Approval{Principal: "alice", Tool: "web.post", Class: "write", Args: json.RawMessage(`{}`),
			ArgsHash: policy.ArgsHash(json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)))})
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan *store.Approval)
		go func() {
			r, err := a.Await(ctx, req.ID, bound, nil)
			if err != nil {
				t.Error(err)
			}
			got <- r
		}()
		// Replica A read it pending: with no poll, only a wake makes it read again.
		for r := <-st.reads; r.ID != req.ID || r.State != store.StatePending; r = <-st.reads {
		}
		if _, err := b.Decide(ctx, req.ID, true, "bob", ""); err != nil {
			t.Fatal(err)
		}
		if r := <-got; r.State != store.StateApproved {
			t.Fatalf("woke with %s, want approved", r.State)
		}
	}
}
