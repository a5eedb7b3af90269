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

// writeArgs are arguments of every tool that writes.
var writeArgs = map[string]string{
	"create_customer":     `{"email":"jenny@example.com"}`,
	"create_refund":       `{"charge":"ch_123"}`,
	"create_invoice":      `{"customer":"cus_123","currency":"usd","items":[{"description":"Setup","amount":5000}]}`,
	"finalize_invoice":    `{"invoice":"in_123"}`,
	"send_invoice":        `{"invoice":"in_123"}`,
	"update_subscription": `{"subscription":"sub_123","cancel_at_period_end":true}`,
	"cancel_subscription": `{"subscription":"sub_123"}`,
	"create_product":      `{"name":"Pro"}`,
	"create_price":        `{"product":"prod_123","unit_amount":100,"currency":"usd"}`,
	"create_payment_link": `{"items":[{"price":"price_123"}]}`,
}

// writeTools are the tools of the catalog that do not only read; every
// one has arguments in writeArgs.
func writeTools(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, tool := range catalogOf(t, build(t, newFront(t), "stripe", "")) {
		if tool.Class == legate.ClassRead {
			continue
		}
		if writeArgs[tool.Name] == "" {
			t.Fatalf("write tool %s has no arguments in writeArgs", tool.Name)
		}
		out = append(out, tool.Name)
	}
	return out
}

// Every write, called a thousand times with one idempotency key, is done
// once by Stripe: the first attempt reaches stripe-mock and its answer is
// lost (the connection cut mid-answer, max_attempts 1); the client calls
// again, on the same operation record, and every hundredth time on a
// fresh one (another gateway process), where only Stripe's deduplication
// by Idempotency-Key (or, for cancel_subscription's DELETE, which Stripe
// does not deduplicate, reading the subscription first) stands between
// the retry and a second write. Every call that answers gets the same
// object.
func TestEveryWriteIsDoneOnceOverAThousandRetries(t *testing.T) {
	for _, tool := range writeTools(t) {
		t.Run(tool, func(t *testing.T) {
			f := newFront(t)
			retrying := build(t, f, "stripe", "")
			giving := build(t, f, "stripe", "max_attempts: 1")
			giving.key, giving.ops = retrying.key, retrying.ops
			lost := 0
			f.lose = func(created int, w http.ResponseWriter, r *http.Request) bool {
				if lost++; lost == 1 {
					cutShort(w)
				}
				return lost == 1
			}
			args := writeArgs[tool]
			_, err := giving.call(t, "t1", tool, args, "op-1000")
			wantCode(t, err, legate.CodeTransient)
			first := ""
			for i := range 999 {
				in := []*instance{retrying, giving}[i%2]
				if i%100 == 0 {
					in = build(t, f, "stripe", "")
					in.key = retrying.key
				}
				got := decode[model.Object](t, in.do(t, "t1", tool, args, "op-1000"))
				if first == "" {
					first = got.ExternalID
				}
				if got.ExternalID == "" || got.ExternalID != first {
					t.Fatalf("call %d: %s; the first got %s", i, got.ExternalID, first)
				}
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			writes := 0
			for k, n := range f.forwarded {
				if n != 1 {
					t.Fatalf("key %s reached stripe-mock %d times", k, n)
				}
				writes++
			}
			for path, n := range f.deletes {
				if n != 1 {
					t.Fatalf("DELETE %s reached stripe-mock %d times", path, n)
				}
				writes++
			}
			want := map[string]int{"create_invoice": 2}[tool] // the invoice and its item
			if writes != max(want, 1) || lost == 0 {
				t.Fatalf("%d writes reached stripe-mock, %d answers lost; want %d, 1", writes, lost, max(want, 1))
			}
		})
	}
}

// A key of the other mode than the instance's is refused before any
// request, for every write.
func TestEveryWriteRefusesAKeyOfTheOtherMode(t *testing.T) {
	f := newFront(t)
	live := build(t, f, "stripe", "mode: live")
	for _, tool := range writeTools(t) {
		_, err := live.call(t, "t1", tool, writeArgs[tool], "op-"+tool)
		wantCode(t, err, legate.CodePermissionDenied)
	}
	if f.count() != 0 {
		t.Fatalf("%d requests sent with a key of the other mode", f.count())
	}
}
