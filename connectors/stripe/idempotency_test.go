package stripe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/connectors/connectortest"
	"github.com/legate-mcp/legate/connectors/saas/model"
)

// The front forwards the first attempt to stripe-mock, which refunds, and
// then holds the answer until the connector's request times out; the
// retry carries the same Idempotency-Key and gets the recorded outcome.
func TestTimedOutRefundIsDoneOnce(t *testing.T) {
	f := newFront(t)
	in := build(t, f, "stripe", "timeout: 300ms")
	f.lose = func(created int, w http.ResponseWriter, r *http.Request) bool {
		<-r.Context().Done() // refunded; the answer never leaves in time
		return true
	}
	var retries []string
	res, err := in.tool(t, "create_refund").Run(context.Background(), &connectors.Call{
		Tool: "create_refund", Args: json.RawMessage(`{"charge_id":"ch_1","amount":500}`), Caller: connectors.Caller{Tenant: "t1"},
		Credentials: connectortest.Creds{"secret_key": key}, OperationID: "op-once",
		Key: func() []byte { return in.key }, Operations: in.ops, Retried: func(r string) { retries = append(retries, r) },
	})
	r := decode[model.Refund](t, outcome{res, err})
	posts := f.requestsTo(http.MethodPost, "/v1/refunds")
	// Two requests, unless the machine is so slow that the replay timed
	// out too: then more, all with the one key.
	if r.ExternalID != "re_front000001" || len(f.refunds) != 1 || len(posts) < 2 || len(retries) != len(posts)-1 {
		t.Fatalf("refund %s; %d refunds made by %d requests, %d retries; want re_front000001, made once", r.ExternalID, len(f.refunds), len(posts), len(retries))
	}
	for i, p := range posts {
		if p.Idempotency != posts[0].Idempotency || retries[max(i-1, 0)] != "timeout" {
			t.Fatalf("request %d: key %q after %q; retries %v", i, p.Idempotency, posts[0].Idempotency, retries)
		}
	}
	if f.forwarded[posts[0].Idempotency] != 1 {
		t.Fatalf("forwarded %v", f.forwarded)
	}
}

// A thousand refunds, each of whose first attempt reaches stripe-mock and
// then loses its answer: most by a connection cut in the middle of the
// answer, every hundredth by a timeout. Half the calls retry within the call; the others give up
// (max_attempts 1) and are called again with the same idempotency key.
// Each client gets its refund, and exactly one refund per key is made.
func TestNoDuplicateRefundsOverAThousandLostAnswers(t *testing.T) {
	f := newFront(t)
	retrying := build(t, f, "stripe", "")
	giving := build(t, f, "stripe", "max_attempts: 1")
	timing := build(t, f, "stripe", "timeout: 300ms\nmax_attempts: 5")
	giving.key, giving.ops = retrying.key, retrying.ops
	timing.key, timing.ops = retrying.key, retrying.ops
	f.lose = func(created int, w http.ResponseWriter, r *http.Request) bool {
		if (created-1)%100 == 0 {
			<-r.Context().Done()
		} else {
			cutShort(w)
		}
		return true
	}
	const writes = 1000
	for i := range writes {
		in := retrying
		switch {
		case i%100 == 0:
			in = timing
		case i%2 == 1:
			in = giving
		}
		op, args := fmt.Sprintf("op-%d", i), fmt.Sprintf(`{"charge_id":"ch_%d","amount":%d}`, i, i+1)
		res, err := in.call(t, "t1", "create_refund", args, op)
		if in == giving {
			wantCode(t, err, legate.CodeTransient)
			res, err = in.call(t, "t1", "create_refund", args, op)
		}
		if r := decode[model.Refund](t, outcome{res, err}); r.ExternalID != fmt.Sprintf("re_front%06d", i+1) {
			t.Fatalf("write %d: got %+v", i, r)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.refunds) != writes || len(f.forwarded) != writes {
		t.Fatalf("%d refunds made under %d keys; want %d of each", len(f.refunds), len(f.forwarded), writes)
	}
	for k, n := range f.forwarded {
		if n != 1 {
			t.Fatalf("key %s reached stripe-mock %d times", k, n)
		}
	}
}

// Calls with one idempotency key at once: one refund; every call gets it
// or CONFLICT (the first attempt still runs).
func TestConcurrentRetriesRefundOnce(t *testing.T) {
	f := newFront(t)
	in := build(t, f, "stripe", "")
	var wg sync.WaitGroup
	results := make([]outcome, 16)
	for i := range results {
		wg.Go(func() {
			res, err := in.call(t, "t1", "create_refund", `{"charge_id":"ch_1"}`, "op-same")
			results[i] = outcome{res, err}
		})
	}
	wg.Wait()
	for _, o := range results {
		if o.err != nil {
			wantCode(t, o.err, legate.CodeConflict)
			continue
		}
		if r := decode[model.Refund](t, o); r.ExternalID != "re_front000001" {
			t.Fatalf("refund %+v", r)
		}
	}
	if len(f.refunds) != 1 {
		t.Fatalf("%d refunds", len(f.refunds))
	}
}

// Without the operation record (another gateway process, a lost store),
// Stripe's own deduplication by the key still holds: the same call on a
// fresh record sends the same Idempotency-Key and gets the same refund.
func TestStripeDeduplicatesWithoutTheRecord(t *testing.T) {
	f := newFront(t)
	first := build(t, f, "stripe", "")
	again := build(t, f, "stripe", "") // same instance id, empty record
	a := decode[model.Refund](t, first.do(t, "t1", "create_refund", `{"charge_id":"ch_1"}`, "op-1"))
	b := decode[model.Refund](t, again.do(t, "t1", "create_refund", `{"charge_id":"ch_1"}`, "op-1"))
	posts := f.requestsTo(http.MethodPost, "/v1/refunds")
	if a.ExternalID != b.ExternalID || len(f.refunds) != 1 || len(posts) != 2 || posts[0].Idempotency != posts[1].Idempotency {
		t.Fatalf("refunds %s and %s; %d made by %d requests", a.ExternalID, b.ExternalID, len(f.refunds), len(posts))
	}
	// The same key with other arguments, on a fresh record too, is
	// refused as Stripe refuses it: CONFLICT, and nothing refunded.
	other := build(t, f, "stripe", "")
	_, err := other.call(t, "t1", "create_refund", `{"charge_id":"ch_2"}`, "op-1")
	wantCode(t, err, legate.CodeConflict)
	if len(f.refunds) != 1 {
		t.Fatalf("%d refunds", len(f.refunds))
	}
}
