package saas

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/legate-mcp/legate"
	"github.com/legate-mcp/legate/connectors"
)

// FindSkew is how much earlier than its first claim a reconciling Find is
// asked to look, for clocks that disagree with the provider's.
const FindSkew = 5 * time.Minute

// OnceNote ends the description of every tool that writes through
// [WriteOnce]: what a client may rely on when it retries.
const OnceNote = "Writes at most once: repeating the call with the same arguments within the gateway's repeat window (10 minutes by default), or with the same " + legate.IdempotencyMetaKey + " in _meta, returns the first result."

// Write is one write a provider does not deduplicate itself, made safe to
// retry by [WriteOnce].
type Write[Out any] struct {
	// Send performs the write once. It sends marker as the provider's
	// idempotency key where there is one (Stripe: Idempotency-Key); it
	// embeds it in what it creates (Slack: message metadata; GitHub: a
	// hidden comment in the body) only when [Kit.Markers] is on. It
	// returns the result the client gets, or a canonical error (see
	// [Classify]).
	Send func(ctx context.Context, token, marker string) (*Out, error)
	// Find looks for what an earlier attempt created, since (the first
	// claim of the key, less FindSkew): by its marker when [Kit.Markers]
	// is on, else by its content (the same text, by the same account,
	// created since); its result, or nil when there is none. Nil Find
	// says the provider deduplicates by marker itself, so sending again is
	// safe.
	Find func(ctx context.Context, token, marker string, since time.Time) (*Out, error)
}

// Marker returns the marker of call's write: a digest of the instance and
// the call's OperationID, the same for every retry of the call and for a
// later call with the same idempotency key (an approved call run again).
func (k *Kit) Marker(call *connectors.Call) string {
	sum := sha256.Sum256([]byte(k.instance + "\x00" + call.OperationID))
	return "lg1-" + hex.EncodeToString(sum[:12])
}

// WriteOnce performs w at most once per idempotency key (call.OperationID)
// on this instance, however often the call is retried, and returns the
// first outcome to every retry:
//
//  1. it claims the key in the instance's Operations (call.Operations, or
//     the kit's in-memory record when the gateway gives none); a key done
//     returns its recorded outcome, a key held by a running attempt is
//     CONFLICT with the lease's end as RetryAfter;
//  2. when an earlier attempt ended without an outcome (it timed out, the
//     process stopped), it first asks Find whether that write happened,
//     and returns what it found;
//  3. it sends, retrying as [Kit.Do] does; after a TRANSIENT or TIMEOUT
//     failure, which may come after the provider did the write, the next
//     attempt asks Find first again;
//  4. it records the outcome, or gives the claim up on failure so that a
//     retry of the call reconciles again.
//
// The outcome is kept as JSON: Out must survive a JSON round trip.
func WriteOnce[Out any](ctx context.Context, k *Kit, call *connectors.Call, w Write[Out]) (*Out, error) {
	if call.OperationID == "" {
		return nil, legate.Errorf(legate.CodeInvalidArgument, "%s: a write needs an idempotency key (the call's operation id)", k.opts.Provider)
	}
	ops := call.Operations
	if ops == nil {
		ops = k.memory
	}
	op, err := ops.Begin(ctx, call.OperationID, k.opts.Lease)
	if err != nil {
		return nil, &legate.Error{Code: legate.CodeTransient, Message: k.opts.Provider + ": the operation record cannot be read", Err: err}
	}
	switch op.State {
	case connectors.OpDone:
		out := new(Out)
		if err := json.Unmarshal(op.Outcome, out); err != nil {
			return nil, &legate.Error{Code: legate.CodeAdapterMapping, Message: k.opts.Provider + ": the recorded outcome cannot be read", Err: err}
		}
		return out, nil
	case connectors.OpBusy:
		return nil, &legate.Error{Code: legate.CodeConflict, RetryAfter: max(time.Until(op.LeaseUntil), time.Second),
			Message: k.opts.Provider + ": this operation is running already; call again once it ends to get its outcome"}
	}
	marker := k.Marker(call)
	uncertain := op.State == connectors.OpRetry
	since := op.Started.Add(-FindSkew)
	var out *Out
	err = k.Do(ctx, call, func(ctx context.Context, token string, _ int) error {
		if uncertain && w.Find != nil {
			found, err := w.Find(ctx, token, marker, since)
			if err != nil {
				return err
			}
			if found != nil {
				out = found
				return nil
			}
		}
		sent, err := w.Send(ctx, token, marker)
		if err != nil {
			switch legate.CodeOf(Classify(ctx, err, k.opts.Provider)) {
			case legate.CodeTransient, legate.CodeTimeout:
				uncertain = true
			}
			return err
		}
		out = sent
		return nil
	})
	// The record is written even when the call's context has ended: the
	// write happened, and a retry must find it.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err != nil {
		ops.Abandon(rctx, call.OperationID)
		return nil, err
	}
	outcome, merr := json.Marshal(out)
	if merr == nil {
		// A failure to record leaves the claim to lapse; the next retry
		// then reconciles through Find.
		ops.Finish(rctx, call.OperationID, outcome)
	}
	return out, nil
}
