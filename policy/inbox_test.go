package policy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/store"
	_ "github.com/legate-mcp/legate/store/all" // the backends, by URL
	"github.com/legate-mcp/legate/store/postgres/pgtest"
)

// hiccup is an approval store whose first heartbeats fail.
type hiccup struct {
	store.ApprovalStore
	fail  int32
	beats atomic.Int32
}

func (h *hiccup) Heartbeat(ctx context.Context, id string, now time.Time) error {
	if h.beats.Add(1) <= h.fail {
		return errors.New("database is locked")
	}
	return h.ApprovalStore.Heartbeat(ctx, id, now)
}

// TestAFailedHeartbeatIsReportedAndRetried: a heartbeat the store refuses
// is reported with its approval, not dropped, and tried again.
func TestAFailedHeartbeatIsReportedAndRetried(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite://:memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := &hiccup{ApprovalStore: st.Approvals(), fail: 2}
	in := policy.NewInbox(h, policy.ApprovalsConfig{})
	policy.SetHeartbeat(in, 100*time.Millisecond)
	var mu sync.Mutex
	var reported []string
	in.OnError(func(op, id string, err error) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, op+" "+id+" "+err.Error())
	})
	a, _, err := in.Open(ctx, &store.Approval{Principal: "alice", Tool: "web.post", Class: "write", Args: json.RawMessage(`{}`), ArgsHash: policy.ArgsHash(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if a, err = in.Decide(ctx, a.ID, true, "bob", ""); err != nil {
		t.Fatal(err)
	}
	// The run lasts until two failed heartbeats and a good one.
	won, err := in.Execute(ctx, a, func(context.Context) (json.RawMessage, error) {
		for deadline := time.Now().Add(5 * time.Second); h.beats.Load() < 3 && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		return json.RawMessage(`{}`), nil
	}, func(error) json.RawMessage { return nil })
	if err != nil || !won {
		t.Fatalf("execute: won %v, %v", won, err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "heartbeat " + a.ID + " database is locked"
	if len(reported) != 2 || reported[0] != want || reported[1] != want {
		t.Fatalf("reported %q, want %q twice", reported, want)
	}
	if n := h.beats.Load(); n < 3 {
		t.Fatalf("%d heartbeats, want 2 failed and 1 that succeeded", n)
	}
}

// TestOpenRacesOpenOneRequest: the same call made several times at once,
// through two processes sharing the store (a client calling again through
// another replica while its first call is still being taken), opens one
// request, which they all share, not one each that approvers might each
// approve and the gateway run.
func TestOpenRacesOpenOneRequest(t *testing.T) {
	ctx := context.Background()
	for _, backend := range []struct {
		name string
		open func(t *testing.T) (store.Store, error) // one more process on the test's database
	}{
		{"sqlite", func() func(t *testing.T) (store.Store, error) {
			dir := ""
			return func(t *testing.T) (store.Store, error) {
				if dir == "" {
					dir = t.TempDir()
				}
				return store.Open(ctx, filepath.Join(dir, "legate.db"))
			}
		}()},
		{"postgres", func() func(t *testing.T) (store.Store, error) {
			url := ""
			return func(t *testing.T) (store.Store, error) {
				if url == "" {
					url = pgtest.URL(t)
				}
				return store.Open(ctx, url)
			}
		}()},
	} {
		t.Run(backend.name, func(t *testing.T) {
			var stores []store.Store
			for range 2 {
				st, err := backend.open(t)
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				stores = append(stores, st)
			}
			first, second := stores[0], stores[1]
			inboxes := []*policy.Inbox{policy.NewInbox(first.Approvals(), policy.ApprovalsConfig{}), policy.NewInbox(second.Approvals(), policy.ApprovalsConfig{})}
			for round := range 20 {
				args := json.RawMessage(fmt.Sprintf(`{"round":%d}`, round))
				start := make(chan struct{})
				var mu sync.Mutex
				opened, created := map[string]bool{}, 0
				var wg sync.WaitGroup
				for i := range 8 {
					wg.Go(func() {
						<-start
						a, c, err := inboxes[i%2].Open(ctx, &store.Approval{Principal: "alice", Tool: "web.post", Class: "write", Args: args, ArgsHash: policy.ArgsHash(args)})
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						defer mu.Unlock()
						opened[a.ID] = true
						if c {
							created++
						}
					})
				}
				close(start)
				wg.Wait()
				if len(opened) != 1 || created != 1 {
					t.Fatalf("round %d: 8 identical calls at once opened requests %v, %d of them reported created; want one, created once",
						round, slices.Sorted(maps.Keys(opened)), created)
				}
			}
		})
	}
}
