package policy_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/legate-mcp/legate/policy"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/store/sqlite"
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
	st, err := sqlite.OpenMemory(ctx)
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
