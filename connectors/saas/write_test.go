package saas_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/saas"
)

type posted struct {
	ID     string `json:"id"`
	Marker string `json:"marker"`
}

// provider is a fake provider that keeps what it was sent, by marker, and
// may answer a write it performed with a failure, as a timeout does.
type provider struct {
	mu     sync.Mutex
	writes []posted
	// after is called once the write is done; its error is the answer.
	after func(n int) error
}

func (p *provider) write() saas.Write[posted] {
	return saas.Write[posted]{
		Send: func(ctx context.Context, tok, marker string) (*posted, error) {
			p.mu.Lock()
			out := posted{ID: fmt.Sprintf("m%d", len(p.writes)+1), Marker: marker}
			p.writes = append(p.writes, out)
			n := len(p.writes)
			p.mu.Unlock()
			if p.after != nil {
				if err := p.after(n); err != nil {
					return nil, err
				}
			}
			return &out, nil
		},
		Find: func(ctx context.Context, tok, marker string, since time.Time) (*posted, error) {
			p.mu.Lock()
			defer p.mu.Unlock()
			for _, w := range p.writes {
				if w.Marker == marker {
					return &w, nil
				}
			}
			return nil, nil
		},
	}
}

func (p *provider) count() int { p.mu.Lock(); defer p.mu.Unlock(); return len(p.writes) }

func TestWriteOnceReconcilesATimedOutWrite(t *testing.T) {
	p := &provider{after: func(n int) error {
		if n == 1 {
			return context.DeadlineExceeded // done, but the answer never came
		}
		return nil
	}}
	k := newKit("acme", saas.Options{})
	out, err := saas.WriteOnce(t.Context(), k, newCall("post", "t1"), p.write())
	if err != nil || out == nil || out.ID != "m1" {
		t.Fatalf("outcome %+v, %v; want the first write's", out, err)
	}
	if p.count() != 1 {
		t.Fatalf("%d writes; want 1", p.count())
	}
}

func TestWriteOnceReplaysTheOutcome(t *testing.T) {
	p := &provider{}
	k := newKit("acme", saas.Options{})
	ops := saas.NewMemoryOperations()
	for i := range 3 {
		call := newCall("post", "t1")
		call.Operations = ops
		out, err := saas.WriteOnce(t.Context(), k, call, p.write())
		if err != nil || out.ID != "m1" {
			t.Fatalf("call %d: %+v, %v", i, out, err)
		}
	}
	if p.count() != 1 {
		t.Fatalf("%d writes; want 1", p.count())
	}
	// Another key writes again.
	call := newCall("post", "t1")
	call.OperationID, call.Operations = "op-2", ops
	if out, err := saas.WriteOnce(t.Context(), k, call, p.write()); err != nil || out.ID != "m2" {
		t.Fatalf("another key: %+v, %v", out, err)
	}
}

func TestWriteOnceAfterAFailedCall(t *testing.T) {
	// The first call gives up after the provider wrote; the client's retry
	// of the call finds the write instead of writing again.
	p := &provider{after: func(n int) error {
		if n == 1 {
			return context.DeadlineExceeded
		}
		return nil
	}}
	k := newKit("acme", saas.Options{MaxAttempts: 1})
	ops := saas.NewMemoryOperations()
	call := newCall("post", "t1")
	call.Operations = ops
	_, err := saas.WriteOnce(t.Context(), k, call, p.write())
	wantCode(t, err, legate.CodeTimeout)
	out, err := saas.WriteOnce(t.Context(), k, call, p.write())
	if err != nil || out.ID != "m1" || p.count() != 1 {
		t.Fatalf("retry: %+v, %v, %d writes; want m1 and one write", out, err, p.count())
	}
}

func TestWriteOnceDefiniteFailure(t *testing.T) {
	denied := true
	p := &provider{}
	w := p.write()
	send := w.Send
	w.Send = func(ctx context.Context, tok, marker string) (*posted, error) {
		if denied {
			return nil, saas.StatusError("acme", 403, 0, "missing_scope")
		}
		return send(ctx, tok, marker)
	}
	k := newKit("acme", saas.Options{})
	ops := saas.NewMemoryOperations()
	call := newCall("post", "t1")
	call.Operations = ops
	_, err := saas.WriteOnce(t.Context(), k, call, w)
	wantCode(t, err, legate.CodePermissionDenied)
	denied = false // the scope was granted; the same call again writes
	if out, err := saas.WriteOnce(t.Context(), k, call, w); err != nil || out.ID != "m1" || p.count() != 1 {
		t.Fatalf("after the fix: %+v, %v, %d writes", out, err, p.count())
	}
}

func TestWriteOnceBusy(t *testing.T) {
	ops := saas.NewMemoryOperations()
	if _, err := ops.Begin(t.Context(), "op-1", time.Hour); err != nil {
		t.Fatal(err)
	}
	p := &provider{}
	call := newCall("post", "t1")
	call.Operations = ops
	_, err := saas.WriteOnce(t.Context(), newKit("acme", saas.Options{}), call, p.write())
	if le := wantCode(t, err, legate.CodeConflict); le.RetryAfter <= 0 {
		t.Errorf("RetryAfter %v", le.RetryAfter)
	}
	if p.count() != 0 {
		t.Fatal("wrote while another attempt holds the key")
	}
}

func TestWriteOnceRacingCalls(t *testing.T) {
	p := &provider{}
	k := newKit("acme", saas.Options{})
	ops := saas.NewMemoryOperations()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			call := newCall("post", "t1")
			call.Operations = ops
			out, err := saas.WriteOnce(context.Background(), k, call, p.write())
			if err != nil && legate.CodeOf(err) != legate.CodeConflict || err == nil && out.ID != "m1" {
				t.Errorf("racer: %+v, %v", out, err)
			}
		})
	}
	wg.Wait()
	if p.count() != 1 {
		t.Fatalf("%d writes; want 1", p.count())
	}
}

// A thousand writes, each answered by a timeout after the provider did it
// on its first attempt, some of whose calls give up and are retried by
// the client: every client gets its first write's outcome, and the
// provider holds exactly one write per key.
func TestWriteOnceNoDuplicates(t *testing.T) {
	p := &provider{}
	var mu sync.Mutex
	seen := map[string]bool{}
	p.after = func(int) error {
		mu.Lock()
		defer mu.Unlock()
		// The first write of each marker times out.
		last := p.writes[len(p.writes)-1].Marker
		if !seen[last] {
			seen[last] = true
			return context.DeadlineExceeded
		}
		return nil
	}
	ops := saas.NewMemoryOperations()
	kits := []*saas.Kit{newKit("acme", saas.Options{}), newKit("acme", saas.Options{MaxAttempts: 1})}
	for i := range 1000 {
		call := newCall("post", "t1")
		call.OperationID, call.Operations = fmt.Sprintf("op-%d", i), ops
		out, err := saas.WriteOnce(t.Context(), kits[i%2], call, p.write())
		if i%2 == 1 { // gave up: the client calls again
			wantCode(t, err, legate.CodeTimeout)
			out, err = saas.WriteOnce(t.Context(), kits[i%2], call, p.write())
		}
		if err != nil || out == nil || out.Marker != kits[0].Marker(call) {
			t.Fatalf("write %d: %+v, %v", i, out, err)
		}
	}
	markers := map[string]int{}
	for _, w := range p.writes {
		markers[w.Marker]++
	}
	if len(p.writes) != 1000 || len(markers) != 1000 {
		t.Fatalf("%d writes of %d keys; want 1000 of 1000", len(p.writes), len(markers))
	}
}

func TestWriteOnceNeedsAKey(t *testing.T) {
	call := newCall("post", "t1")
	call.OperationID = ""
	_, err := saas.WriteOnce(t.Context(), newKit("acme", saas.Options{}), call, (&provider{}).write())
	wantCode(t, err, legate.CodeInvalidArgument)
}

func TestMemoryOperations(t *testing.T) {
	ops := saas.NewMemoryOperations()
	ctx := t.Context()
	op, _ := ops.Begin(ctx, "k", 0) // a lease already over
	if op.State != connectors.OpNew || op.Attempts != 1 {
		t.Fatalf("first: %+v", op)
	}
	op, _ = ops.Begin(ctx, "k", time.Hour)
	if op.State != connectors.OpRetry || op.Attempts != 2 {
		t.Fatalf("lapsed: %+v", op)
	}
	if op, _ = ops.Begin(ctx, "k", time.Hour); op.State != connectors.OpBusy {
		t.Fatalf("held: %+v", op)
	}
	ops.Abandon(ctx, "k")
	if op, _ = ops.Begin(ctx, "k", time.Hour); op.State != connectors.OpRetry || op.Attempts != 3 {
		t.Fatalf("abandoned: %+v", op)
	}
	if err := ops.Finish(ctx, "k", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := ops.Finish(ctx, "k", []byte(`{"a":2}`)); err == nil {
		t.Fatal("finished twice")
	}
	if err := ops.Finish(ctx, "nope", nil); err == nil {
		t.Fatal("finished an unknown key")
	}
	if op, _ = ops.Begin(ctx, "k", time.Hour); op.State != connectors.OpDone || string(op.Outcome) != `{"a":1}` {
		t.Fatalf("done: %+v", op)
	}
}

// A provider that deduplicates by our key (Stripe's Idempotency-Key) gives
// no Find: an attempt whose answer was lost is sent again with the same
// marker, and the provider answers with the first result.
func TestWriteOnceWithTheProvidersKey(t *testing.T) {
	var mu sync.Mutex
	byKey := map[string]posted{}
	sends := 0
	w := saas.Write[posted]{Send: func(ctx context.Context, tok, marker string) (*posted, error) {
		mu.Lock()
		defer mu.Unlock()
		sends++
		out, seen := byKey[marker]
		if !seen {
			out = posted{ID: fmt.Sprintf("re_%d", len(byKey)+1), Marker: marker}
			byKey[marker] = out
			return nil, context.DeadlineExceeded // done, answer lost
		}
		return &out, nil
	}}
	out, err := saas.WriteOnce(t.Context(), newKit("acme", saas.Options{}), newCall("refund", "t1"), w)
	if err != nil || out.ID != "re_1" || sends != 2 || len(byKey) != 1 {
		t.Fatalf("%+v, %v after %d sends, %d objects; want re_1 after 2 sends of one key", out, err, sends, len(byKey))
	}
}
