package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
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

// connectorKit gives each native call what the connector contract hands
// it beside credentials: its instance's signing key and operation record.
type connectorKit struct {
	once sync.Once
	root []byte
}

// forCall sets call.Key and call.Operations for instance id. The key is
// derived when a connector asks for it: only connectors that sign make the
// gateway read, or create, SigningKeyName.
func (k *connectorKit) forCall(ctx context.Context, g *Gateway, id string, call *connectors.Call) {
	call.Key = func() []byte {
		k.once.Do(func() {
			// Not the call's own deadline: a call cancelled early must not
			// leave the process on a key of its own.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			k.root = rootKey(rctx, g)
		})
		mac := hmac.New(sha256.New, k.root)
		mac.Write([]byte("connector-instance\x00" + id))
		return mac.Sum(nil)
	}
	call.Operations = instanceOperations{st: g.opts.Store.Operations(), scope: id}
}

// rootKey reads (or creates) SigningKeyName. Without a vault, or when it
// cannot be read, the key is the process's own: cursors and refs then end
// with it, which is logged.
func rootKey(ctx context.Context, g *Gateway) []byte {
	if v := g.opts.Vault; v != nil {
		key, _, err := v.Get(ctx, "", SigningKeyName)
		if errors.Is(err, vault.ErrNotFound) {
			fresh := make([]byte, 32)
			rand.Read(fresh)
			if _, err = v.Set(ctx, "", SigningKeyName, fresh); err == nil {
				key, _, err = v.Get(ctx, "", SigningKeyName) // a replica racing here wrote last: take its
			}
		}
		if err == nil && len(key) >= 32 {
			return key
		}
		g.log.Warn("connector signing key unavailable; cursors and refs will not outlive this process", "secret", SigningKeyName, "err", err)
	}
	key := make([]byte, 32)
	rand.Read(key)
	return key
}

// instanceOperations is one instance's view of the store's operation
// records.
type instanceOperations struct {
	st    store.OperationStore
	scope string
}

func (o instanceOperations) Begin(ctx context.Context, key string, lease time.Duration) (connectors.Operation, error) {
	op, err := o.st.Begin(ctx, o.scope, key, time.Now(), lease)
	return connectors.Operation{State: connectors.OperationState(op.State), Attempts: op.Attempts,
		Started: op.Started, LeaseUntil: op.LeaseUntil, Outcome: op.Outcome}, err
}

func (o instanceOperations) Finish(ctx context.Context, key string, outcome json.RawMessage) error {
	return o.st.Finish(ctx, o.scope, key, outcome, time.Now())
}

func (o instanceOperations) Abandon(ctx context.Context, key string) error {
	return o.st.Abandon(ctx, o.scope, key)
}

var _ connectors.Operations = instanceOperations{}
