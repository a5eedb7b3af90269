package vault

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/legate-mcp/legate/store"
)

// DefaultBatchSize is how many versions a rotation re-wraps per transaction.
const DefaultBatchSize = 100

// RotateOptions tune a rotation; nil means the defaults.
type RotateOptions struct {
	// BatchSize is how many versions are re-wrapped per transaction
	// (default DefaultBatchSize).
	BatchSize int
	// MaxBatches stops the run after that many batches (0: run to the end);
	// a later run continues. For throttled runs and tests.
	MaxBatches int
	// Progress is told after every batch.
	Progress func(RotateProgress)
}

// RotateProgress is the state of a rotation after one batch.
type RotateProgress struct {
	Primary   string // the key data keys are being re-wrapped with
	Rewrapped int    // by this run so far
	Remaining int    // versions still wrapped by an older key
}

// RotateReport is what a rotation did.
type RotateReport struct {
	// NewKey is the id of the key this run made (the new primary); empty
	// when the run continued an unfinished rotation.
	NewKey string
	// Primary is the key every data key is (being) re-wrapped with.
	Primary string
	// Rewrapped counts the versions this run re-wrapped.
	Rewrapped int
	// Remaining counts the versions still wrapped by an older key; 0 when
	// the rotation is complete.
	Remaining int
	// Retired lists the older keys no version uses any more: dropped from
	// the key file, or to be dropped from the environment by the operator.
	Retired []string
	// Kept lists the key ids the ring keeps, primary first.
	Kept []string
	// SetEnv is set when the ring comes from the environment and this run
	// made a new key: the value the operator sets LEGATE_MASTER_KEY to (the
	// new key first, the current one kept to decrypt) before running the
	// rotation again to re-wrap. It holds key material; nothing else does.
	SetEnv string
}

// Rotate makes a new primary key and re-wraps every data key with it — the
// data keys are unwrapped and wrapped again, the values are never
// decrypted — then drops the older keys once no version uses them.
//
// A run that finds versions still wrapped by an older key (an interrupted
// run, or the second step with a ring from the environment) makes no new
// key and continues re-wrapping with the current primary. Versions are
// re-wrapped in batches, one transaction each, every change applied only if
// its row is still as read, so a run may stop at any point and readers
// never see a half-changed row.
//
// With a ring from the environment the vault cannot write the ring: a run
// with nothing to continue makes a key and returns only SetEnv, changing no
// row; once every process runs with the new value, a second run re-wraps
// and reports the keys to drop (Retired).
func (v *Vault) Rotate(ctx context.Context, opts *RotateOptions) (*RotateReport, error) {
	if opts == nil {
		opts = &RotateOptions{}
	}
	batch := opts.BatchSize
	if batch <= 0 {
		batch = DefaultBatchSize
	}
	rep := &RotateReport{}
	done, err := v.startRotation(ctx, rep)
	if err != nil || done {
		return rep, err
	}

	idle := 0
	for batches := 0; opts.MaxBatches == 0 || batches < opts.MaxBatches; batches++ {
		if err := ctx.Err(); err != nil {
			return rep, v.remaining(ctx, rep, err)
		}
		// Read the ring each batch: a rotation begun meanwhile by another
		// process may have made a newer primary, which this run then joins.
		ring, err := v.reload()
		if err != nil {
			return rep, err
		}
		primary := ring.Primary()
		rep.Primary = primary.ID
		rows, err := v.st.NotWrappedBy(ctx, primary.ID, batch)
		if err != nil {
			return rep, v.remaining(ctx, rep, err)
		}
		if len(rows) == 0 {
			return rep, v.retire(ctx, rep)
		}
		changes := make([]store.SecretRewrap, 0, len(rows))
		for _, row := range rows {
			wrapped, err := v.rewrap(row, primary)
			if err != nil {
				return rep, v.remaining(ctx, rep, err)
			}
			changes = append(changes, store.SecretRewrap{Old: row, KeyID: primary.ID, WrappedKey: wrapped})
		}
		n, err := v.st.Rewrap(ctx, changes)
		if err != nil {
			return rep, v.remaining(ctx, rep, err)
		}
		rep.Rewrapped += n
		// A batch that changed nothing lost every row to another writer; two
		// in a row means another rotation, with another primary, is fighting
		// this one.
		if n == 0 {
			idle++
		} else {
			idle = 0
		}
		if idle >= 2 {
			return rep, v.remaining(ctx, rep, errors.New("another rotation with another primary key is re-wrapping the same secrets; run one rotation at a time"))
		}
		if err := v.remaining(ctx, rep, nil); err != nil {
			return rep, err
		}
		if opts.Progress != nil {
			opts.Progress(RotateProgress{Primary: rep.Primary, Rewrapped: rep.Rewrapped, Remaining: rep.Remaining})
		}
	}
	return rep, nil
}

// startRotation makes the new primary key unless a rotation is unfinished;
// done reports that there is nothing more to do in this run (the ring
// comes from the environment and must be set by the operator first).
func (v *Vault) startRotation(ctx context.Context, rep *RotateReport) (done bool, err error) {
	unlock, err := v.src.lock()
	if err != nil {
		return false, err
	}
	defer unlock()
	ring, err := v.reload()
	if err != nil {
		return false, err
	}
	usage, err := v.st.KeyUsage(ctx)
	if err != nil {
		return false, err
	}
	pending := 0
	for id, n := range usage {
		if ring.Key(id) == nil {
			return false, fmt.Errorf("%d secret versions are wrapped by key %q, which %s does not hold: add it back to the ring as an older key (after the primary) and run the rotation again", n, id, v.src)
		}
		if id != ring.Primary().ID {
			pending += n
		}
	}
	rep.Primary = ring.Primary().ID
	rep.Remaining = pending
	if pending > 0 {
		return false, nil // continue the unfinished rotation
	}
	k, err := NewKey()
	if err != nil {
		return false, err
	}
	// The older keys nothing uses are dropped here already.
	next, err := NewKeyRing(k, ring.Primary())
	if err != nil {
		return false, err
	}
	rep.NewKey, rep.Kept = k.ID, next.IDs()
	if !v.src.Writable() {
		rep.SetEnv = next.EnvValue()
		for _, n := range usage {
			rep.Remaining += n
		}
		return true, nil
	}
	if err := v.src.save(next); err != nil {
		return false, err
	}
	v.mu.Lock()
	v.ring = next
	v.mu.Unlock()
	rep.Primary = k.ID
	return false, nil
}

// rewrap unwraps a version's data key with its key and wraps it with
// primary; the value stays as it is.
func (v *Vault) rewrap(row store.Secret, primary Key) ([]byte, error) {
	dek, err := v.unwrap(row)
	if err != nil {
		return nil, fmt.Errorf("%w (legate vault rm %s removes it; then set it again)", err, row.Name)
	}
	defer clear(dek)
	return seal(primary.key, dek, keyAD(primary.ID, row))
}

// remaining counts the versions still under an older key into rep and
// returns cause (or the counting error).
func (v *Vault) remaining(ctx context.Context, rep *RotateReport, cause error) error {
	count := ctx
	if ctx.Err() != nil {
		count = context.WithoutCancel(ctx)
	}
	usage, err := v.st.KeyUsage(count)
	if err != nil {
		return errors.Join(cause, err)
	}
	rep.Remaining = 0
	for id, n := range usage {
		if id != rep.Primary {
			rep.Remaining += n
		}
	}
	return cause
}

// retire drops from the ring the older keys no version uses.
func (v *Vault) retire(ctx context.Context, rep *RotateReport) error {
	unlock, err := v.src.lock()
	if err != nil {
		return err
	}
	defer unlock()
	ring, err := v.reload()
	if err != nil {
		return err
	}
	usage, err := v.st.KeyUsage(ctx)
	if err != nil {
		return err
	}
	var keep []Key
	rep.Retired, rep.Remaining = nil, 0
	for i, k := range ring.Keys() {
		switch {
		case i == 0 || usage[k.ID] > 0:
			keep = append(keep, k)
			if i > 0 {
				rep.Remaining += usage[k.ID] // set meanwhile with an older ring
			}
		default:
			rep.Retired = append(rep.Retired, k.ID)
		}
	}
	rep.Primary = ring.Primary().ID
	next, err := NewKeyRing(keep...)
	if err != nil {
		return err
	}
	rep.Kept = next.IDs()
	if len(rep.Retired) == 0 || !v.src.Writable() {
		return nil
	}
	if err := v.src.save(next); err != nil {
		return err
	}
	v.mu.Lock()
	if v.ring == nil || slices.Equal(v.ring.IDs(), ring.IDs()) {
		v.ring = next
	}
	v.mu.Unlock()
	return nil
}
