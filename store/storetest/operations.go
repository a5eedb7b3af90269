package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/legate-mcp/legate/store"
)

func testOperations(t *testing.T, open Opener) {
	ctx := context.Background()
	lease := time.Minute

	t.Run("claim, finish, replay", func(t *testing.T) {
		ops := open(t).Operations()
		op, err := ops.Begin(ctx, "slack", "op-1", base, lease)
		must(t, err)
		if op.State != store.OpNew || op.Attempts != 1 || !op.Started.Equal(base) || !op.LeaseUntil.Equal(base.Add(lease)) {
			t.Fatalf("first begin: %+v", op)
		}
		// While the lease runs, nobody else may write.
		op, err = ops.Begin(ctx, "slack", "op-1", base.Add(time.Second), lease)
		must(t, err)
		if op.State != store.OpBusy || op.Attempts != 1 || !op.LeaseUntil.Equal(base.Add(lease)) {
			t.Fatalf("begin within the lease: %+v", op)
		}
		// The same key in another scope is another record.
		op, err = ops.Begin(ctx, "github", "op-1", base, lease)
		must(t, err)
		if op.State != store.OpNew {
			t.Fatalf("begin in another scope: %+v", op)
		}
		must(t, ops.Finish(ctx, "slack", "op-1", []byte(`{"ts":"1.2"}`), base.Add(2*time.Second)))
		for _, at := range []time.Time{base.Add(3 * time.Second), base.Add(time.Hour)} {
			op, err = ops.Begin(ctx, "slack", "op-1", at, lease)
			must(t, err)
			if op.State != store.OpDone || string(op.Outcome) != `{"ts":"1.2"}` || !op.Started.Equal(base) {
				t.Fatalf("begin after finish: %+v", op)
			}
		}
		err = ops.Finish(ctx, "slack", "op-1", []byte(`{"ts":"9.9"}`), base.Add(4*time.Second))
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second finish: %v, want ErrConflict", err)
		}
		if op, _ := ops.Begin(ctx, "slack", "op-1", base.Add(5*time.Second), lease); string(op.Outcome) != `{"ts":"1.2"}` {
			t.Fatalf("a second finish replaced the outcome: %+v", op)
		}
		if err := ops.Finish(ctx, "slack", "never-begun", []byte(`{}`), base); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("finish unknown: %v, want ErrNotFound", err)
		}
	})

	t.Run("a lapsed or abandoned claim is taken again as a retry", func(t *testing.T) {
		ops := open(t).Operations()
		_, err := ops.Begin(ctx, "slack", "op-2", base, lease)
		must(t, err)
		op, err := ops.Begin(ctx, "slack", "op-2", base.Add(lease), lease)
		must(t, err)
		if op.State != store.OpRetry || op.Attempts != 2 || !op.Started.Equal(base) || !op.LeaseUntil.Equal(base.Add(2*lease)) {
			t.Fatalf("begin after the lease: %+v", op)
		}
		must(t, ops.Abandon(ctx, "slack", "op-2"))
		op, err = ops.Begin(ctx, "slack", "op-2", base.Add(lease+time.Second), lease)
		must(t, err)
		if op.State != store.OpRetry || op.Attempts != 3 {
			t.Fatalf("begin after abandon: %+v", op)
		}
		must(t, ops.Finish(ctx, "slack", "op-2", []byte(`{}`), base))
		must(t, ops.Abandon(ctx, "slack", "op-2")) // a finished record stays finished
		must(t, ops.Abandon(ctx, "slack", "unknown"))
		if op, _ := ops.Begin(ctx, "slack", "op-2", base, lease); op.State != store.OpDone {
			t.Fatalf("abandon undid a finish: %+v", op)
		}
	})

	t.Run("exactly one of racing callers claims a key", func(t *testing.T) {
		ops := open(t).Operations()
		for _, at := range []time.Time{base, base.Add(lease)} { // new, then lapsed
			got := race(func(int) store.Operation {
				op, err := ops.Begin(ctx, "slack", "op-3", at, lease)
				if err != nil {
					t.Error(err)
				}
				return op
			})
			claims := 0
			for _, op := range got {
				switch op.State {
				case store.OpNew, store.OpRetry:
					claims++
				case store.OpBusy:
				default:
					t.Errorf("racing begin: %+v", op)
				}
			}
			if claims != 1 {
				t.Fatalf("%d of %d racers claimed the key at %v", claims, racers, at)
			}
		}
	})

	t.Run("prune", func(t *testing.T) {
		ops := open(t).Operations()
		for i, key := range []string{"old-1", "old-2", "new"} {
			_, err := ops.Begin(ctx, "slack", key, base.Add(time.Duration(i)*time.Hour), lease)
			must(t, err)
		}
		must(t, ops.Finish(ctx, "slack", "old-1", []byte(`{}`), base))
		n, err := ops.Prune(ctx, base.Add(90*time.Minute))
		must(t, err)
		if n != 2 {
			t.Fatalf("pruned %d, want 2", n)
		}
		if op, _ := ops.Begin(ctx, "slack", "old-1", base.Add(3*time.Hour), lease); op.State != store.OpNew {
			t.Fatalf("a pruned key: %+v", op)
		}
		if op, _ := ops.Begin(ctx, "slack", "new", base.Add(2*time.Hour), lease); op.State != store.OpBusy {
			t.Fatalf("a kept key: %+v", op)
		}
	})
}
