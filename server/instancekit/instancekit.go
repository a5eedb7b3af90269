// Package instancekit is what the gateway hands each native connector
// call beside its credentials (the connector contract's Call.Key and
// Call.Operations): a signing key derived for the instance alone, rooted
// in a secret of the vault, and the instance's view of the store's
// operation records; and the pruning of those records.
package instancekit

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/legate-mcp/legate/connectors"
	"github.com/legate-mcp/legate/store"
	"github.com/legate-mcp/legate/vault"
)

// SigningKeyName is the vault secret (shared, tenant "") the gateway keeps
// the root of every instance's signing key in: created on first use,
// sealed by the master key like any secret, so every replica derives the
// same keys and a key rotation keeps them. Deleting it invalidates every
// cursor and object ref handed out.
const SigningKeyName = "legate/connector-signing-key"

// OperationRetention is how long the record of a connector write is kept:
// a retry of the call within it returns the first outcome.
const OperationRetention = 30 * 24 * time.Hour

// Kit gives native calls their key and operation record. It is safe for
// concurrent use.
type Kit struct {
	vault *vault.Vault
	ops   store.OperationStore
	log   *slog.Logger
	// prevented is told of each write an instance did not make again.
	prevented func(instance string)

	once    sync.Once
	root    []byte
	derived sync.Map // label → its key, derived once (a connector that signs asks on every ref)
}

// New returns the kit of a gateway whose vault is v (nil without one: the
// key is then the process's own) and whose operation records are ops;
// prevented (nil: none) is told of each write an instance does not make
// again because its key's record shows it done.
func New(v *vault.Vault, ops store.OperationStore, log *slog.Logger, prevented func(instance string)) *Kit {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if prevented == nil {
		prevented = func(string) {}
	}
	return &Kit{vault: v, ops: ops, log: log, prevented: prevented}
}

// ForCall sets call.Key and call.Operations for instance id. The key is
// derived when a connector asks for it: only connectors that sign make the
// gateway read, or create, SigningKeyName.
func (k *Kit) ForCall(ctx context.Context, id string, call *connectors.Call) {
	call.Key = func() []byte { return k.derive(ctx, "connector-instance\x00"+id) }
	call.Operations = operations{st: k.ops, scope: id, prevented: k.prevented}
}

// Derive returns the key of purpose ("connections" seals the states of
// per-user connection flows), derived from the same root as the
// instances' keys: the same on every replica and in the CLI.
func (k *Kit) Derive(ctx context.Context, purpose string) []byte {
	return k.derive(ctx, "purpose\x00"+purpose)
}

// derive returns the key of label, the same slice each time: callers do
// not change it.
func (k *Kit) derive(ctx context.Context, label string) []byte {
	if key, ok := k.derived.Load(label); ok {
		return key.([]byte)
	}
	k.once.Do(func() {
		// Not the call's own deadline: a call cancelled early must not
		// leave the process on a key of its own.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		k.root = k.rootKey(rctx)
	})
	mac := hmac.New(sha256.New, k.root)
	mac.Write([]byte(label))
	key, _ := k.derived.LoadOrStore(label, mac.Sum(nil))
	return key.([]byte)
}

// rootKey reads (or creates) SigningKeyName. Without a vault, or when it
// cannot be read, the key is the process's own: cursors and refs then end
// with it, which is logged.
func (k *Kit) rootKey(ctx context.Context) []byte {
	if k.vault != nil {
		key, _, err := k.vault.Get(ctx, "", SigningKeyName)
		if errors.Is(err, vault.ErrNotFound) {
			fresh := make([]byte, 32)
			rand.Read(fresh)
			if _, err = k.vault.Set(ctx, "", SigningKeyName, fresh); err == nil {
				key, _, err = k.vault.Get(ctx, "", SigningKeyName) // a replica racing here wrote last: take its
			}
		}
		if err == nil && len(key) >= 32 {
			return key
		}
		k.log.Warn("connector signing key unavailable; cursors and refs will not outlive this process", "secret", SigningKeyName, "err", err)
	}
	key := make([]byte, 32)
	rand.Read(key)
	return key
}

// Prune removes the operation records past OperationRetention at once
// and every hour until ctx ends (store.PruneEvery).
func (k *Kit) Prune(ctx context.Context) {
	store.PruneEvery(ctx, k.log, "operation records", OperationRetention, k.ops.Prune)
}

// operations is one instance's view of the store's operation records.
type operations struct {
	st        store.OperationStore
	scope     string
	prevented func(instance string)
}

func (o operations) Begin(ctx context.Context, key string, lease time.Duration) (connectors.Operation, error) {
	op, err := o.st.Begin(ctx, o.scope, key, time.Now(), lease)
	if err == nil && connectors.OperationState(op.State) == connectors.OpDone {
		o.prevented(o.scope) // the connector answers the recorded outcome
	}
	return connectors.Operation{State: connectors.OperationState(op.State), Attempts: op.Attempts,
		Started: op.Started, LeaseUntil: op.LeaseUntil, Outcome: op.Outcome}, err
}

func (o operations) Finish(ctx context.Context, key string, outcome json.RawMessage) error {
	return o.st.Finish(ctx, o.scope, key, outcome, time.Now())
}

func (o operations) Abandon(ctx context.Context, key string) error {
	return o.st.Abandon(ctx, o.scope, key)
}

var _ connectors.Operations = operations{}
